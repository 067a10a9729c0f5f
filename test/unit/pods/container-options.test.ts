/** Container-option contributors: env precedence, mounts appended, warnings → events; the device contributor. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { isNodeletError } from '../../../core/errors/catalogue.ts';
import { contributedEnv, contributedMounts, type ContainerOptionsContributor, type ContainerWarning } from '../../../core/pods/container-options.ts';
import { createPodSetup } from '../../../core/pods/pod-setup-impl.ts';
import { probeVolumePlugins } from '../../../core/agent/volume-plugins.ts';
import { deviceContainerOptions } from '../../../core/devices/index.ts';
import type { NodeletOptions } from '../../../core/config/options.ts';
import { memoryLogger } from './fakes.ts';

const UID = '0b7c3f1e-1a2b-4c3d-8e9f-000000000001';
const pod = {
  metadata: { name: 'p', namespace: 'ns', uid: UID },
  spec: {
    containers: [
      {
        name: 'c',
        env: [
          { name: 'OWN', value: '1' },
          { name: 'SHARED', value: 'container' },
        ],
      },
    ],
  },
} as V1Pod;
const c = pod.spec!.containers[0]!;
const mount = (containerPath: string, name = containerPath) => ({ name, hostPath: `/h${containerPath}`, containerPath, readOnly: false });

describe('contributedEnv', () => {
  it("puts contributor env under the container's own; a later contributor wins over an earlier one", async () => {
    const calls: string[] = [];
    const a: ContainerOptionsContributor = {
      name: 'a',
      env: () => {
        calls.push('a');
        return { A: 'a', X: 'a', SHARED: 'a' };
      },
    };
    const b: ContainerOptionsContributor = {
      name: 'b',
      env: async () => {
        calls.push('b');
        return { X: 'b' };
      },
    };
    const env = await contributedEnv([a, b], pod, c, async () => {
      calls.push('own');
      return { OWN: '1', SHARED: 'container' };
    });
    expect(env).toEqual({ A: 'a', X: 'b', OWN: '1', SHARED: 'container' });
    expect(calls).toEqual(['a', 'b', 'own']);
  });

  it("returns the container's own env when no contributor adds any", async () => {
    const own = { OWN: '1' };
    expect(await contributedEnv([{ name: 'mounts-only' }], pod, c, async () => own)).toBe(own);
  });
});

describe('contributedMounts', () => {
  it("appends each contributor's mounts after the volume mounts, each seeing the paths taken so far, and reports warnings", async () => {
    const seen: string[][] = [];
    const warnings: ContainerWarning[] = [];
    const a: ContainerOptionsContributor = {
      name: 'a',
      mounts: (_p, _c, ctx) => {
        seen.push([...ctx.taken]);
        return { mounts: [mount('/a')], warnings: [{ reason: 'R', message: 'not applied' }] };
      },
    };
    const b: ContainerOptionsContributor = {
      name: 'b',
      mounts: async (_p, _c, ctx) => {
        seen.push([...ctx.taken]);
        return { mounts: [mount(`${ctx.podDir}/b`)] };
      },
    };
    const out = await contributedMounts([a, { name: 'env-only' }, b], pod, c, '/pod', [mount('/data')], (w) => warnings.push(w));
    expect(out.map((m) => m.containerPath)).toEqual(['/data', '/a', '/pod/b']);
    expect(seen).toEqual([['/data'], ['/data', '/a']]);
    expect(warnings).toEqual([{ reason: 'R', message: 'not applied' }]);
  });
});

describe('pod set-up with contributors', () => {
  let root: string | undefined;
  afterEach(async () => {
    if (root) await rm(root, { recursive: true, force: true });
    root = undefined;
  });

  it('applies contributor env and mounts, and emits each warning as a Warning event on the container', async () => {
    root = await mkdtemp(join(tmpdir(), 'nodelet-copts-'));
    const o = { rootDir: root, podsDir: join(root, 'pods'), nodeName: 'node-a' } as NodeletOptions;
    const events: string[] = [];
    const contributor: ContainerOptionsContributor = {
      name: 'devices',
      env: () => ({ DEV: 'Dev-1', SHARED: 'device' }),
      mounts: (_p, _c, ctx) => ({
        mounts: [mount('/dev-dir')],
        warnings: [{ reason: 'DeviceConfigNotApplied', message: `CDI device v=1 (taken: ${ctx.taken.length})` }],
      }),
    };
    const setup = createPodSetup(o, undefined, '10.0.0.1', memoryLogger(), {
      volumePlugins: probeVolumePlugins(),
      containerOptions: [contributor],
      events: { emit: (r, type, reason, note) => events.push(`${r.fieldPath} ${type} ${reason} ${note}`) },
    });
    const env = await setup.env(pod, c);
    expect(env).toEqual({ DEV: 'Dev-1', OWN: '1', SHARED: 'container' });
    const prepared = await setup.prepare(pod);
    expect((await setup.mounts(pod, c, prepared, env)).map((m) => m.containerPath)).toEqual(['/dev-dir']);
    expect(events).toEqual(['spec.containers{c} Warning DeviceConfigNotApplied CDI device v=1 (taken: 0)']);
  });
});

describe('deviceContainerOptions', () => {
  it("gives the allocation's env; a config with nothing to mount gives its conflicts as warnings", async () => {
    const devices = deviceContainerOptions({
      needsAllocation: () => false,
      allocate: async () => {
        throw new Error('not called');
      },
      containerConfig: () =>
        ({ envs: { DEV: 'Dev-1' }, mounts: [], devices: [], cdiDevices: [], annotations: {}, conflicts: ['env X set by two plugins'] }) as never,
    });
    expect(await devices.env!(pod, c)).toEqual({ DEV: 'Dev-1' });
    expect(await devices.mounts!(pod, c, { podDir: '/pods/u', taken: [] })).toEqual({
      warnings: [{ reason: 'DeviceConfigNotApplied', message: 'env X set by two plugins' }],
    });
  });

  it('allocates a container that holds no devices yet; a failure is a container config error with the upstream message', async () => {
    const calls: string[] = [];
    const devices = deviceContainerOptions({
      needsAllocation: () => true,
      allocate: async () => {
        calls.push('allocate');
        return { admit: false, reason: 'UnexpectedAdmissionError', message: 'Allocate failed due to x, which is unexpected' };
      },
      containerConfig: () => {
        throw new Error('not reached');
      },
    });
    const err = await Promise.resolve(devices.env!(pod, c)).catch((e: unknown) => e);
    expect(calls).toEqual(['allocate']);
    expect(isNodeletError(err) && err.code).toBe('NDL_CONTAINER_CONFIG');
    expect(String((err as Error).message)).toContain('Allocate failed due to x, which is unexpected');
  });
});

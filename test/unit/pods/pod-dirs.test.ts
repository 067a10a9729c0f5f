import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { probeVolumePlugins } from '../../../core/agent/volume-plugins.ts';
import type { NodeletOptions } from '../../../core/config/options.ts';
import { createPodSetup } from '../../../core/pods/pod-setup-impl.ts';
import { memoryLogger } from './fakes.ts';

const UID = '0b7c3f1e-1a2b-4c3d-8e9f-0000000000d1';
const pod = {
  metadata: { name: 'p', namespace: 'ns', uid: UID },
  spec: { initContainers: [{ name: 'init' }], containers: [{ name: 'c' }, { name: 'd' }], volumes: [{ name: 'scratch', emptyDir: {} }] },
} as V1Pod;

// The pod's own dirs are made in prepare() in one call to the dir maker (core/exec/dir-maker.ts): upstream's
// layout and modes, before any volume is set up, and a failure is a rejection, not a throw.
describe('a pod\u2019s directories', () => {
  let root: string | undefined;
  afterEach(async () => {
    if (root) await rm(root, { recursive: true, force: true });
    root = undefined;
  });
  const setupIn = (dir: string) =>
    createPodSetup({ rootDir: dir, podsDir: join(dir, 'pods'), nodeName: 'node-a' } as NodeletOptions, undefined, '10.0.0.1', memoryLogger(), {
      volumePlugins: probeVolumePlugins(),
      containerOptions: [],
      events: { emit: () => undefined },
    });

  it('makes pods/<uid> and one log dir per container (0750) when the pod is prepared, and logPath needs no other', async () => {
    root = await mkdtemp(join(tmpdir(), 'nodelet-poddirs-'));
    const setup = setupIn(root);
    const prepared = (await setup.prepare(pod)) as ReadonlyMap<string, unknown>;
    expect([...prepared.keys()]).toEqual(['scratch']);
    expect((await stat(join(root, 'pods', UID))).mode & 0o777).toBe(0o750);
    for (const c of ['init', 'c', 'd']) {
      const dir = join(root, 'logs', 'pods', `ns_p_${UID}`, c);
      expect((await stat(dir)).mode & 0o777).toBe(0o750);
      expect(setup.logPath(pod, c, 0)).toBe(join(dir, '0.log'));
    }
    expect((await stat(join(root, 'pods', UID, 'volumes', 'kubernetes.io~empty-dir', 'scratch'))).isDirectory()).toBe(true);
  });

  it('rejects (nothing thrown out of prepare) when the pods dir cannot be made', async () => {
    root = await mkdtemp(join(tmpdir(), 'nodelet-poddirs-'));
    await writeFile(join(root, 'pods'), 'a file where the pods dir belongs');
    const setup = setupIn(root);
    let result: Promise<unknown> | undefined;
    expect(() => {
      result = setup.prepare(pod);
    }).not.toThrow();
    await expect(result).rejects.toMatchObject({ code: 'NDL_POD_DIRS', errnoCode: 'ENOTDIR' });
  });
});

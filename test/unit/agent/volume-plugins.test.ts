/**
 * The volume plugin list is built by each composition root: two roots in one
 * process (two CSI set-ups, two registries) share no plugin state, and a
 * registry without CSI does not see another root's CSI plugin.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { probeVolumePlugins } from '../../../core/agent/volume-plugins.ts';
import { isNodeletError } from '../../../core/errors/catalogue.ts';
import { startCsi, type Csi } from '../../../core/volumes/csi/index.ts';
import { imageVolumePlugin, prepareVolumes } from '../../../core/volumes/index.ts';
import { memoryLogger } from '../pods/fakes.ts';

describe('probeVolumePlugins', () => {
  const roots: string[] = [];
  const csis: Csi[] = [];
  afterEach(async () => {
    for (const c of csis.splice(0)) c.stop();
    await Promise.all(roots.splice(0).map((r) => rm(r, { recursive: true, force: true })));
  });

  async function root(): Promise<{ dir: string; csi: Csi }> {
    const dir = await mkdtemp(join(tmpdir(), 'nodelet-root-'));
    roots.push(dir);
    const csi = await startCsi({
      options: { podsDir: join(dir, 'pods'), pluginsDir: join(dir, 'plugins'), volumeStatsAggPeriodMs: 60_000 },
      nodeName: 'n',
      log: memoryLogger(),
    });
    csis.push(csi);
    return { dir, csi };
  }

  it('lists the built-in plugins, then the CSI plugin the root passes in', () => {
    expect(
      probeVolumePlugins()
        .list()
        .map((p) => p.pluginName),
    ).toEqual([
      'kubernetes.io/empty-dir',
      'kubernetes.io/configmap',
      'kubernetes.io/secret',
      'kubernetes.io/downward-api',
      'kubernetes.io/projected',
      'kubernetes.io/host-path',
    ]);
  });

  it('lists the image plugin the root builds on its image service, before CSI', async () => {
    const { csi } = await root();
    const images = { pullVolume: () => Promise.reject(new Error('unused')), releaseVolumes: () => undefined };
    const image = imageVolumePlugin({ images, events: { emit: () => undefined } });
    const registry = probeVolumePlugins({ csi: csi.volumePlugin, image });
    expect(
      registry
        .list()
        .map((p) => p.pluginName)
        .slice(-2),
    ).toEqual(['kubernetes.io/image', 'kubernetes.io/csi']);
    expect(registry.find({ name: 'v', image: { reference: 'r' } })).toBe(image);
    expect(() => probeVolumePlugins().find({ name: 'v', image: { reference: 'r' } })).toThrow('volume "v": type "image" is not supported on this node');
  });

  it('gives two roots in one process their own registries and CSI plugins', async () => {
    const a = await root();
    const b = await root();
    const ra = probeVolumePlugins({ csi: a.csi.volumePlugin });
    const rb = probeVolumePlugins({ csi: b.csi.volumePlugin });
    expect(ra).not.toBe(rb);
    expect(a.csi.volumePlugin).not.toBe(b.csi.volumePlugin);
    expect(ra.list().at(-1)).toBe(a.csi.volumePlugin);
    expect(rb.list().at(-1)).toBe(b.csi.volumePlugin);
    // Registering into one registry leaves the other (and a fresh one) unchanged.
    const extra = { ...probeVolumePlugins().list()[0]!, pluginName: 'example.com/extra', canSupport: () => false };
    ra.register(extra);
    expect(rb.list().map((p) => p.pluginName)).not.toContain('example.com/extra');
    expect(
      probeVolumePlugins()
        .list()
        .map((p) => p.pluginName),
    ).not.toContain('example.com/extra');
  });

  it('does not let a root without CSI set up a CSI volume because another root started CSI', async () => {
    await root();
    const dir = await mkdtemp(join(tmpdir(), 'nodelet-root-'));
    roots.push(dir);
    const podDir = join(dir, 'pods', 'u1');
    await mkdir(podDir, { recursive: true });
    const pod = {
      metadata: { name: 'p', namespace: 'ns', uid: 'u1' },
      spec: { containers: [], volumes: [{ name: 'v', csi: { driver: 'x.csi' } }] },
    } as unknown as V1Pod;
    const source = {
      getConfigMap: async () => undefined,
      getSecret: async () => undefined,
      requestServiceAccountToken: async () => {
        throw new Error('no');
      },
    };
    const err = await prepareVolumes(pod, { podDir, source, nodeName: 'n', hostIP: '127.0.0.1', log: memoryLogger(), plugins: probeVolumePlugins() }).catch(
      (e: unknown) => e,
    );
    expect(isNodeletError(err) && err.code).toBe('NDL_VOLUME_UNSUPPORTED');
  });
});

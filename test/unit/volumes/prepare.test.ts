import { lstat, mkdir, readFile, readdir, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { V1Volume } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isNodeletError } from '../../../core/errors/catalogue.ts';
import { failedMountMessage, prepareVolumes, teardownVolumes, volumeFailures } from '../../../core/volumes/prepare.ts';
import { VolumePluginRegistry } from '../../../core/volumes/plugin-registry.ts';
import { probeVolumePlugins } from '../../../core/agent/volume-plugins.ts';
import type { VolumePlugin } from '../../../core/volumes/types.ts';
import { FakeObjectSource, memoryLogger, pod, tempDir } from './fakes.ts';

let dir: string;
let cleanup: () => Promise<void>;
let podDir: string;
let source: FakeObjectSource;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  dir = await realpath(dir);
  podDir = path.join(dir, 'pods', 'uid-1234');
  await mkdir(podDir, { recursive: true });
  source = new FakeObjectSource();
});
afterEach(() => cleanup());

function prepare(volumes: V1Volume[], extra: Parameters<typeof pod>[0] = {}, meta: Parameters<typeof pod>[1] = {}) {
  return prepareVolumes(pod({ volumes, ...extra }, meta), {
    podDir,
    source,
    nodeName: 'node-a',
    hostIP: '10.0.0.5',
    log: memoryLogger(),
    nodeAllocatable: { cpu: '4', memory: '8Gi' },
    plugins: probeVolumePlugins(),
  });
}

async function failureOf(p: Promise<unknown>) {
  try {
    await p;
  } catch (e) {
    return { err: e, failures: volumeFailures(e) ?? [] };
  }
  throw new Error('expected a failure');
}

const modeOf = async (p: string) => (await stat(p)).mode & 0o777;

describe('configMap and secret volumes', () => {
  it('writes keys as files under kubernetes.io~configmap with defaultMode, read-only', async () => {
    source.addConfigMap('ns1', 'app-cfg', { 'app.yaml': 'a: 1\n', other: 'x' }, { 'blob.bin': Buffer.from([0, 1, 2]).toString('base64') });
    const vols = await prepare([{ name: 'cfg', configMap: { name: 'app-cfg', defaultMode: 0o440 } }]);
    const v = vols.get('cfg')!;
    expect(v).toMatchObject({ name: 'cfg', kind: 'configMap', readOnly: true, hostPath: path.join(podDir, 'volumes/kubernetes.io~configmap/cfg') });
    expect(await readFile(path.join(v.hostPath, 'app.yaml'), 'utf8')).toBe('a: 1\n');
    expect([...(await readFile(path.join(v.hostPath, 'blob.bin')))]).toEqual([0, 1, 2]);
    expect(await modeOf(path.join(v.hostPath, 'app.yaml'))).toBe(0o440);
    expect((await readdir(v.hostPath)).sort()).toEqual(['app.yaml', 'blob.bin', 'other']); // no manifest or temp files inside
  });

  it('honours items with per-item mode and nested paths; defaults to 0644', async () => {
    source.addSecret('ns1', 'creds', { user: 'admin', pass: 's3cret' });
    const vols = await prepare([
      {
        name: 's',
        secret: {
          secretName: 'creds',
          items: [
            { key: 'pass', path: 'db/password', mode: 0o400 },
            { key: 'user', path: 'user' },
          ],
        },
      },
    ]);
    const root = vols.get('s')!.hostPath;
    expect(root).toBe(path.join(podDir, 'volumes/kubernetes.io~secret/s'));
    expect(await readFile(path.join(root, 'db/password'), 'utf8')).toBe('s3cret');
    expect(await modeOf(path.join(root, 'db/password'))).toBe(0o400);
    expect(await modeOf(path.join(root, 'user'))).toBe(0o644);
  });

  it('refuses an items path with .. before writing anything', async () => {
    source.addConfigMap('ns1', 'c', { k: 'v' });
    const { err, failures } = await failureOf(prepare([{ name: 'cfg', configMap: { name: 'c', items: [{ key: 'k', path: '../../escape' }] } }]));
    expect(isNodeletError(err, 'NDL_PATH_ESCAPE')).toBe(true);
    expect(failures).toEqual([expect.objectContaining({ volume: 'cfg', message: `cfg: path "../../escape" must not contain '..'` })]);
    await expect(lstat(path.join(podDir, 'volumes/escape'))).rejects.toThrow();
    await expect(lstat(path.join(podDir, 'volumes/kubernetes.io~configmap/cfg'))).rejects.toThrow();
  });

  it('reports a missing configMap/secret like upstream, and per volume', async () => {
    const { err, failures } = await failureOf(
      prepare([
        { name: 'a', configMap: { name: 'nope' } },
        { name: 'b', secret: { secretName: 'gone' } },
        { name: 'scratch', emptyDir: {} },
      ]),
    );
    expect(isNodeletError(err, 'NDL_VOLUME_SOURCE')).toBe(true);
    expect(failures.map(failedMountMessage)).toEqual([
      'MountVolume.SetUp failed for volume "a" : configmap "nope" not found',
      'MountVolume.SetUp failed for volume "b" : secret "gone" not found',
    ]);
    // the healthy volume was still set up
    expect((await stat(path.join(podDir, 'volumes/kubernetes.io~empty-dir/scratch'))).isDirectory()).toBe(true);
  });

  it('accepts a missing optional source (empty volume) and missing optional keys', async () => {
    source.addConfigMap('ns1', 'part', { present: '1' });
    const vols = await prepare([
      { name: 'opt', configMap: { name: 'nope', optional: true } },
      {
        name: 'keys',
        configMap: {
          name: 'part',
          optional: true,
          items: [
            { key: 'absent', path: 'a' },
            { key: 'present', path: 'p' },
          ],
        },
      },
    ]);
    expect(await readdir(vols.get('opt')!.hostPath)).toEqual([]);
    expect(await readdir(vols.get('keys')!.hostPath)).toEqual(['p']);
  });

  it('reports a missing non-optional key', async () => {
    source.addConfigMap('ns1', 'c', { k: 'v' });
    const { failures } = await failureOf(prepare([{ name: 'cfg', configMap: { name: 'c', items: [{ key: 'x', path: 'x' }] } }]));
    expect(failures[0]!.message).toBe('configmap references non-existent config key: x');
  });

  it('re-sync rewrites changed files, removes dropped ones, and never deletes through a symlink', async () => {
    source.addConfigMap('ns1', 'c', { keep: '1', drop: '2', 'nested/gone': '3' });
    const vols = await prepare([{ name: 'cfg', configMap: { name: 'c' } }]);
    const root = vols.get('cfg')!.hostPath;
    const manifest = path.join(podDir, 'volumes/kubernetes.io~configmap/.cfg.nodelet-files');
    expect(Object.keys(JSON.parse(await readFile(manifest, 'utf8')).files).sort()).toEqual(['drop', 'keep', 'nested/gone']);
    // a container (or anyone) replaces a written file's dir by a symlink to host data
    await mkdir(path.join(dir, 'host'));
    await writeFile(path.join(dir, 'host/gone'), 'precious');
    await rm(path.join(root, 'nested'), { recursive: true });
    await symlink(path.join(dir, 'host'), path.join(root, 'nested'));
    // and drops a symlink named like a file nodelet will remove
    await rm(path.join(root, 'drop'));
    await writeFile(path.join(dir, 'host/drop-target'), 'precious too');
    await symlink(path.join(dir, 'host/drop-target'), path.join(root, 'drop'));

    source.addConfigMap('ns1', 'c', { keep: 'changed' });
    await expect(prepare([{ name: 'cfg', configMap: { name: 'c' } }])).rejects.toMatchObject({ code: 'NDL_PATH_ESCAPE' });
    expect(await readFile(path.join(dir, 'host/gone'), 'utf8')).toBe('precious');
    expect(await readFile(path.join(dir, 'host/drop-target'), 'utf8')).toBe('precious too');
    expect(await lstat(path.join(root, 'drop')).catch(() => undefined)).toBeUndefined(); // the link itself was removed

    await rm(path.join(root, 'nested'));
    await prepare([{ name: 'cfg', configMap: { name: 'c' } }]);
    expect((await readdir(root)).sort()).toEqual(['keep']);
    expect(await readFile(path.join(root, 'keep'), 'utf8')).toBe('changed');
  });

  it('does not rewrite unchanged files on re-sync', async () => {
    source.addConfigMap('ns1', 'c', { k: 'v' });
    const v = (await prepare([{ name: 'cfg', configMap: { name: 'c' } }])).get('cfg')!;
    const before = await stat(path.join(v.hostPath, 'k'));
    await prepare([{ name: 'cfg', configMap: { name: 'c' } }]);
    const after = await stat(path.join(v.hostPath, 'k'));
    expect(after.ino).toBe(before.ino);
  });
});

describe('downwardAPI volumes', () => {
  it('writes labels/annotations as sorted key="value" lines and scalar fields', async () => {
    const vols = await prepare(
      [
        {
          name: 'info',
          downwardAPI: {
            items: [
              { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
              { path: 'annotations', fieldRef: { fieldPath: 'metadata.annotations' } },
              { path: 'name', fieldRef: { fieldPath: 'metadata.name' } },
              { path: 'tier', fieldRef: { fieldPath: "metadata.labels['tier']" } },
              { path: 'node', fieldRef: { fieldPath: 'spec.nodeName' } },
              { path: 'mem', resourceFieldRef: { containerName: 'app', resource: 'limits.memory', divisor: '1Mi' } },
            ],
          },
        },
      ],
      {},
      { labels: { tier: 'front', app: 'web', 'x.io/z': 'q"uote' }, annotations: { note: 'line1\nline2\ttab' } },
    );
    const root = vols.get('info')!.hostPath;
    expect(root).toBe(path.join(podDir, 'volumes/kubernetes.io~downward-api/info'));
    expect(await readFile(path.join(root, 'labels'), 'utf8')).toBe('app="web"\ntier="front"\nx.io/z="q\\"uote"');
    expect(await readFile(path.join(root, 'annotations'), 'utf8')).toBe('note="line1\\nline2\\ttab"');
    expect(await readFile(path.join(root, 'name'), 'utf8')).toBe('web');
    expect(await readFile(path.join(root, 'tier'), 'utf8')).toBe('front');
    expect(await readFile(path.join(root, 'node'), 'utf8')).toBe('node-a');
    expect(await readFile(path.join(root, 'mem'), 'utf8')).toBe('8192'); // no limit → node allocatable 8Gi
  });

  it('reports an unsupported field path', async () => {
    const { failures } = await failureOf(prepare([{ name: 'd', downwardAPI: { items: [{ path: 'x', fieldRef: { fieldPath: 'spec.bogus' } }] } }]));
    expect(failures[0]!.message).toBe('field label not supported: spec.bogus');
  });
});

describe('projected volumes', () => {
  const kubeApiAccess: V1Volume = {
    name: 'kube-api-access-abcde',
    projected: {
      defaultMode: 0o644,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    },
  };

  it('writes the default kube-api-access volume: bound token, ca.crt, namespace', async () => {
    source.addConfigMap('ns1', 'kube-root-ca.crt', { 'ca.crt': '-----BEGIN CERTIFICATE-----\n' });
    const v = (await prepare([kubeApiAccess])).get('kube-api-access-abcde')!;
    expect(v.hostPath).toBe(path.join(podDir, 'volumes/kubernetes.io~projected/kube-api-access-abcde'));
    expect(v.readOnly).toBe(true);
    expect(await readFile(path.join(v.hostPath, 'token'), 'utf8')).toBe('token-1-builder-default');
    expect(await readFile(path.join(v.hostPath, 'ca.crt'), 'utf8')).toBe('-----BEGIN CERTIFICATE-----\n');
    expect(await readFile(path.join(v.hostPath, 'namespace'), 'utf8')).toBe('ns1');
    expect(source.tokenCalls).toEqual([{ namespace: 'ns1', serviceAccount: 'builder', opts: { expirationSeconds: 3607, podName: 'web', podUID: 'uid-1234' } }]);
    // refresh at 80 % of the TTL
    const ttlLeft = v.refreshAt!.getTime() - Date.now();
    expect(ttlLeft).toBeGreaterThan(3607 * 0.8 * 1000 - 60_000);
    expect(ttlLeft).toBeLessThanOrEqual(3607 * 0.8 * 1000);
  });

  it('requests tokens with the audience and path asked for, default SA "default"', async () => {
    const v = (
      await prepare([{ name: 'vault', projected: { sources: [{ serviceAccountToken: { audience: 'vault', path: 'sub/vault-token' } }] } }], {
        serviceAccountName: undefined,
      })
    ).get('vault')!;
    expect(await readFile(path.join(v.hostPath, 'sub/vault-token'), 'utf8')).toBe('token-1-default-vault');
    expect(source.tokenCalls[0]!.opts).toMatchObject({ audience: 'vault', expirationSeconds: 3600 });
    expect(await modeOf(path.join(v.hostPath, 'sub/vault-token'))).toBe(0o644);
  });

  it('reports every failing source together', async () => {
    const { failures } = await failureOf(prepare([{ name: 'p', projected: { sources: [{ configMap: { name: 'a' } }, { secret: { name: 'b' } }] } }]));
    expect(failures[0]!.message).toBe('[configmap "a" not found, secret "b" not found]');
  });
});

describe('emptyDir, hostPath, unsupported types', () => {
  it('emptyDir is a 0777 dir; Memory medium is noted (sizeLimit is enforced by eviction)', async () => {
    const v = (await prepare([{ name: 'cache', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } }])).get('cache')!;
    expect(v).toMatchObject({ kind: 'emptyDir', readOnly: false, hostPath: path.join(podDir, 'volumes/kubernetes.io~empty-dir/cache') });
    expect(await modeOf(v.hostPath)).toBe(0o777);
    expect(v.notes!.join(' ')).toMatch(/Memory.*no tmpfs/);
    expect(v.notes!.join(' ')).not.toMatch(/sizeLimit/);
  });

  it('hostPath type checks like upstream', async () => {
    const host = path.join(dir, 'host');
    await mkdir(host);
    await writeFile(path.join(host, 'file'), 'x');
    const ok = await prepare([
      { name: 'd', hostPath: { path: host, type: 'Directory' } },
      { name: 'c', hostPath: { path: path.join(host, 'made/deep'), type: 'DirectoryOrCreate' } },
      { name: 'f', hostPath: { path: path.join(host, 'new-file'), type: 'FileOrCreate' } },
      { name: 'u', hostPath: { path: path.join(host, 'whatever') } },
    ]);
    expect(ok.get('d')).toMatchObject({ hostPath: host, kind: 'hostPath', readOnly: false });
    expect((await stat(path.join(host, 'made/deep'))).isDirectory()).toBe(true);
    expect((await stat(path.join(host, 'new-file'))).isFile()).toBe(true);
    const { failures } = await failureOf(
      prepare([
        { name: 'a', hostPath: { path: path.join(host, 'file'), type: 'Directory' } },
        { name: 'b', hostPath: { path: host, type: 'File' } },
        { name: 'c', hostPath: { path: host, type: 'Socket' } },
        { name: 'd', hostPath: { path: host, type: 'Bogus' } },
      ]),
    );
    expect(failures.map((f) => f.message)).toEqual([
      `hostPath type check failed: ${host}/file is not a directory`,
      `hostPath type check failed: ${host} is not a file`,
      `hostPath type check failed: ${host} is not a socket file`,
      'Bogus is an invalid volume type',
    ]);
  });

  it('hostPath Socket accepts a unix socket', async () => {
    const sock = path.join(dir, 's.sock');
    const server = net.createServer().listen(sock);
    await new Promise((r) => server.once('listening', r));
    try {
      expect((await prepare([{ name: 's', hostPath: { path: sock, type: 'Socket' } }])).get('s')!.hostPath).toBe(sock);
    } finally {
      server.close();
    }
  });

  it('unsupported types fail with NDL_VOLUME_UNSUPPORTED naming the type', async () => {
    const { err, failures } = await failureOf(
      prepare([
        { name: 'share', nfs: { server: 'nfs.example', path: '/x' } },
        { name: 'claim', persistentVolumeClaim: { claimName: 'c' } },
      ]),
    );
    expect(isNodeletError(err, 'NDL_VOLUME_UNSUPPORTED')).toBe(true);
    expect(failures.map((f) => f.message)).toEqual([
      'volume "share": type "nfs" is not supported on this node',
      'volume "claim": type "persistentVolumeClaim" is not supported on this node',
    ]);
  });

  it('a registered plugin extends the registry without touching the others', async () => {
    const calls: string[] = [];
    const fakeCsi: VolumePlugin = {
      pluginName: 'kubernetes.io/csi',
      canSupport: (v) => v.csi != null,
      async setUp(v, ctx) {
        const p = path.join(ctx.podDir, 'volumes/kubernetes.io~csi', v.name, 'mount');
        await mkdir(p, { recursive: true });
        return { name: v.name, hostPath: p, readOnly: false, kind: 'csi' };
      },
      async tearDown(name) {
        calls.push(name);
      },
    };
    const plugins = probeVolumePlugins();
    plugins.register(fakeCsi);
    expect(() => plugins.register(fakeCsi)).toThrow(/already registered/);
    const vols = await prepareVolumes(
      pod({
        volumes: [
          { name: 'inline', csi: { driver: 'x' } },
          { name: 'e', emptyDir: {} },
        ],
      }),
      { podDir, source, nodeName: 'n', hostIP: '10.0.0.5', log: memoryLogger(), plugins },
    );
    expect(vols.get('inline')!.kind).toBe('csi');
    await teardownVolumes(podDir, { plugins });
    expect(calls).toEqual(['inline']);
    await expect(lstat(path.join(podDir, 'volumes'))).rejects.toThrow();
    expect(new VolumePluginRegistry().list()).toEqual([]);
  });
});

describe('teardownVolumes', () => {
  it('removes the volume dirs without following symlinks and leaves hostPath alone', async () => {
    const host = path.join(dir, 'host');
    await mkdir(host);
    await writeFile(path.join(host, 'keep'), 'host file');
    source.addConfigMap('ns1', 'c', { k: 'v' });
    const vols = await prepare([
      { name: 'scratch', emptyDir: {} },
      { name: 'h', hostPath: { path: host } },
      { name: 'cfg', configMap: { name: 'c' } },
    ]);
    await symlink(host, path.join(vols.get('scratch')!.hostPath, 'link-to-host'));
    await teardownVolumes(podDir, { plugins: probeVolumePlugins() });
    await expect(lstat(path.join(podDir, 'volumes'))).rejects.toThrow();
    expect(await readFile(path.join(host, 'keep'), 'utf8')).toBe('host file');
    await teardownVolumes(podDir, { plugins: probeVolumePlugins() }); // idempotent
  });
});

import { mkdir, readFile, realpath, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { V1Container } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expandSubPathExpr, resolveMounts } from '../../../core/pods/mounts.ts';
import type { PreparedVolume } from '../../../core/volumes/types.ts';
import { pod, tempDir } from '../volumes/fakes.ts';

let dir: string;
let cleanup: () => Promise<void>;
let prepared: Map<string, PreparedVolume>;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  dir = await realpath(dir);
  const data = path.join(dir, 'vol/data');
  const cfg = path.join(dir, 'vol/cfg');
  await mkdir(path.join(data, 'logs'), { recursive: true });
  await mkdir(cfg, { recursive: true });
  await writeFile(path.join(cfg, 'app.yaml'), 'a: 1');
  await mkdir(path.join(dir, 'outside'));
  await writeFile(path.join(dir, 'outside/shadow'), 'root:x:0:0');
  prepared = new Map([
    ['data', { name: 'data', hostPath: data, readOnly: false, kind: 'emptyDir' }],
    ['cfg', { name: 'cfg', hostPath: cfg, readOnly: true, kind: 'configMap' }],
  ]);
});
afterEach(() => cleanup());

const container = (volumeMounts: V1Container['volumeMounts']): V1Container => ({ name: 'app', image: 'x', volumeMounts });

describe('resolveMounts', () => {
  it('maps volumeMounts in order with readOnly from the mount or the volume', async () => {
    const mounts = await resolveMounts(
      pod(),
      container([
        { name: 'data', mountPath: '/data/' },
        { name: 'data', mountPath: '/ro', readOnly: true },
        { name: 'cfg', mountPath: '/etc/app' },
      ]),
      prepared,
    );
    expect(mounts).toEqual([
      { name: 'data', hostPath: prepared.get('data')!.hostPath, containerPath: '/data/', readOnly: false },
      { name: 'data', hostPath: prepared.get('data')!.hostPath, containerPath: '/ro', readOnly: true },
      { name: 'cfg', hostPath: prepared.get('cfg')!.hostPath, containerPath: '/etc/app', readOnly: true },
    ]);
  });

  it('resolves subPath to a dir or a file inside the volume, creating a missing dir', async () => {
    const mounts = await resolveMounts(
      pod(),
      container([
        { name: 'data', mountPath: '/logs', subPath: 'logs' },
        { name: 'data', mountPath: '/new', subPath: 'a/b' },
        { name: 'cfg', mountPath: '/etc/app.yaml', subPath: 'app.yaml' },
      ]),
      prepared,
    );
    expect(mounts.map((m) => m.hostPath)).toEqual([path.join(dir, 'vol/data/logs'), path.join(dir, 'vol/data/a/b'), path.join(dir, 'vol/cfg/app.yaml')]);
    expect((await stat(path.join(dir, 'vol/data/a/b'))).isDirectory()).toBe(true);
  });

  it('refuses a subPath through a symlink that points outside the volume (CVE-2017-1002101)', async () => {
    await symlink(path.join(dir, 'outside'), path.join(dir, 'vol/data/escape'));
    await symlink('../../../outside/shadow', path.join(dir, 'vol/data/logs/shadow'));
    for (const subPath of ['escape', 'escape/shadow', 'logs/shadow']) {
      await expect(resolveMounts(pod(), container([{ name: 'data', mountPath: '/x', subPath }]), prepared)).rejects.toMatchObject({
        code: 'NDL_PATH_ESCAPE',
        detail: `data: subPath "${subPath}" resolves outside the volume`,
      });
    }
    expect(await readFile(path.join(dir, 'outside/shadow'), 'utf8')).toBe('root:x:0:0');
  });

  it('refuses lexical escapes in subPath and subPathExpr', async () => {
    await expect(resolveMounts(pod(), container([{ name: 'data', mountPath: '/x', subPath: '../cfg' }]), prepared)).rejects.toMatchObject({
      detail: `data: subPath "../cfg" must not contain '..'`,
    });
    await expect(resolveMounts(pod(), container([{ name: 'data', mountPath: '/x', subPath: '/etc' }]), prepared)).rejects.toMatchObject({
      detail: 'data: subPath "/etc" must be a relative path',
    });
    await expect(
      resolveMounts(pod(), container([{ name: 'data', mountPath: '/x', subPathExpr: '$(P)' }]), prepared, { P: '../../outside' }),
    ).rejects.toMatchObject({
      code: 'NDL_PATH_ESCAPE',
    });
  });

  it('expands subPathExpr from the env and requires every referenced var', async () => {
    const [m] = await resolveMounts(pod(), container([{ name: 'data', mountPath: '/x', subPathExpr: 'logs/$(POD_NAME)' }]), prepared, { POD_NAME: 'web-0' });
    expect(m!.hostPath).toBe(path.join(dir, 'vol/data/logs/web-0'));
    expect(() => expandSubPathExpr('$(A)/$(B)/$(C)', { A: 'a', B: '' })).toThrow(/missing value for B, C/);
  });

  it('rejects unknown volumes and relative mount paths', async () => {
    await expect(resolveMounts(pod(), container([{ name: 'nope', mountPath: '/x' }]), prepared)).rejects.toMatchObject({
      code: 'NDL_POD_INVALID',
      detail: 'cannot find volume "nope" to mount into container "app"',
    });
    await expect(resolveMounts(pod(), container([{ name: 'data', mountPath: 'rel' }]), prepared)).rejects.toMatchObject({ code: 'NDL_POD_INVALID' });
  });

  it('gives a volume nodelet made under the pods dir its real path without reading it, and reads every other one', async () => {
    await mkdir(path.join(dir, 'real-pods', 'uid-1'), { recursive: true });
    await symlink(path.join(dir, 'real-pods'), path.join(dir, 'pods'));
    const pods = { dir: path.join(dir, 'pods'), real: path.join(dir, 'real-pods') };
    // Not on disk: a realpath would fail and leave the path as it is, so the answer shows which way it went.
    const under = (name: string) => path.join(pods.dir, 'uid-1', 'volumes', name);
    const vols = new Map<string, PreparedVolume>([
      ['cfg', { name: 'cfg', hostPath: under('kubernetes.io~configmap/cfg'), readOnly: true, kind: 'configMap' }],
      ['tok', { name: 'tok', hostPath: under('kubernetes.io~projected/tok'), readOnly: true, kind: 'projected' }],
      ['host', { name: 'host', hostPath: under('elsewhere'), readOnly: false, kind: 'hostPath' }],
      ['pv', { name: 'pv', hostPath: under('kubernetes.io~csi/pv/mount'), readOnly: false, kind: 'csi' }],
      ['odd', { name: 'odd', hostPath: `${pods.dir}/uid-1/../../outside`, readOnly: false, kind: 'emptyDir' }],
    ]);
    const mounts = await resolveMounts(pod(), container([...vols.keys()].map((name) => ({ name, mountPath: `/${name}` }))), vols, {}, { pods });
    expect(mounts.map((m) => m.hostPath)).toEqual([
      path.join(pods.real, 'uid-1', 'volumes', 'kubernetes.io~configmap/cfg'),
      path.join(pods.real, 'uid-1', 'volumes', 'kubernetes.io~projected/tok'),
      under('elsewhere'),
      under('kubernetes.io~csi/pv/mount'),
      path.join(dir, 'outside'),
    ]);
    // Without the option, a made volume's path is read (and here, not there, left as it is).
    const [m] = await resolveMounts(pod(), container([{ name: 'cfg', mountPath: '/c' }]), vols);
    expect(m!.hostPath).toBe(under('kubernetes.io~configmap/cfg'));
  });
});

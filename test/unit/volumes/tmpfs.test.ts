import { mkdir, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { V1Volume } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { probeVolumePlugins } from '../../../core/agent/volume-plugins.ts';
import { isMountPoint } from '../../../core/volumes/csi/mount-info.ts';
import { prepareVolumes, teardownVolumes } from '../../../core/volumes/prepare.ts';
import { createTmpfsMounter, memoryEmptyDirSize, type TmpfsMounter } from '../../../core/volumes/tmpfs.ts';
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
  source.addSecret('ns1', 'creds', { token: 's3cret' });
});
afterEach(() => cleanup());

/** A mounter that records commands and keeps a set of "mounted" dirs. */
function fakeMounter(enabled = true) {
  const calls: string[] = [];
  const mounted = new Set<string>();
  const m = createTmpfsMounter({
    enabled,
    isMounted: async (d) => mounted.has(d),
    exec: async (cmd, args) => {
      calls.push(`${cmd} ${args.join(' ')}`);
      const target = args[args.length - 1]!;
      if (cmd === 'mount') mounted.add(target);
      else mounted.delete(target);
    },
  });
  return { m, calls, mounted };
}

const volumes: V1Volume[] = [
  { name: 'mem', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } },
  { name: 'disk', emptyDir: {} },
  { name: 'creds', secret: { secretName: 'creds' } },
];

function prepare(tmpfs: TmpfsMounter, lines: string[] = []) {
  return prepareVolumes(pod({ volumes, containers: [{ name: 'c' }] }), {
    podDir,
    source,
    nodeName: 'node-a',
    hostIP: '10.0.0.5',
    log: memoryLogger(lines),
    plugins: probeVolumePlugins({ tmpfs }),
  });
}

const vol = (plugin: string, name: string) => path.join(podDir, 'volumes', plugin, name);

describe('memory-backed volumes on tmpfs', () => {
  it('mounts a tmpfs on Memory emptyDirs (sized by sizeLimit) and secret volumes, once; unmounts them at tear-down', async () => {
    const f = fakeMounter();
    const prepared = await prepare(f.m);
    await prepare(f.m); // re-sync: already mounted, nothing more
    expect(f.calls.sort()).toEqual([
      `mount -t tmpfs -o mode=0755 tmpfs ${vol('kubernetes.io~secret', 'creds')}`,
      `mount -t tmpfs -o mode=0777,size=${64 * 1024 * 1024} tmpfs ${vol('kubernetes.io~empty-dir', 'mem')}`,
    ]);
    expect(prepared.get('creds')!.notes).toBeUndefined();
    expect(await readFile(path.join(vol('kubernetes.io~secret', 'creds'), 'token'), 'utf8')).toBe('s3cret');
    await teardownVolumes(podDir, { plugins: probeVolumePlugins({ tmpfs: f.m }) });
    expect(f.calls.filter((c) => c.startsWith('umount')).sort()).toEqual([
      `umount ${vol('kubernetes.io~empty-dir', 'mem')}`,
      `umount ${vol('kubernetes.io~secret', 'creds')}`,
    ]);
    expect(f.mounted.size).toBe(0);
  });

  it('requests a projected token while the tmpfs is being mounted, and writes the files only once it is mounted', async () => {
    let finishMount!: (e?: Error) => void;
    const events: string[] = [];
    const target = vol('kubernetes.io~projected', 'kube-api-access');
    const mounter = () =>
      createTmpfsMounter({
        enabled: true,
        isMounted: async () => false,
        exec: (cmd) => {
          events.push(`${cmd} started`);
          return new Promise<void>((resolve, reject) => {
            finishMount = (e) => {
              events.push(e ? `${cmd} failed` : `${cmd} done`);
              if (e) reject(e);
              else resolve();
            };
          }).then(async () => events.push(`files at mount: ${(await readdir(target)).length}`));
        },
      });
    const projected: V1Volume = {
      name: 'kube-api-access',
      projected: {
        sources: [
          { serviceAccountToken: { path: 'token', expirationSeconds: 3600 } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { fieldPath: 'metadata.namespace' } }] } },
        ],
      },
    };
    const run = (tmpfs: TmpfsMounter) =>
      prepareVolumes(pod({ volumes: [projected], containers: [{ name: 'c' }] }), {
        podDir,
        source,
        nodeName: 'node-a',
        hostIP: '10.0.0.5',
        log: memoryLogger([]),
        plugins: probeVolumePlugins({ tmpfs }),
      });
    const done = run(mounter());
    await vi.waitFor(() => expect(source.tokenCalls).toHaveLength(1));
    await vi.waitFor(() => expect(events).toEqual(['mount started'])); // the token was asked for before the mount finished
    finishMount();
    const prepared = await done;
    expect(events).toEqual(['mount started', 'mount done', 'files at mount: 0']);
    expect(await readFile(path.join(prepared.get('kube-api-access')!.hostPath, 'namespace'), 'utf8')).toBe('ns1');
    // A failed mount fails the set-up with the mount's error, even though the token came first.
    await rm(target, { recursive: true, force: true });
    const failing = run(mounter());
    await vi.waitFor(() => expect(source.tokenCalls).toHaveLength(2));
    await vi.waitFor(() => expect(events.at(-1)).toBe('mount started'));
    finishMount(Object.assign(new Error('exit 32'), { stderr: 'mount: permission denied' }));
    await expect(failing).rejects.toThrow(/mount -t tmpfs on .* failed: mount: permission denied/);
  });

  it('reads the mount table only for a dir that existed: a dir it made is mounted at once', async () => {
    const asked: string[] = [];
    const calls: string[] = [];
    const m = createTmpfsMounter({
      enabled: true,
      isMounted: async (d) => (asked.push(d), true),
      exec: async (cmd, args) => void calls.push(`${cmd} ${args.join(' ')}`),
    });
    const fresh = path.join(dir, 'fresh');
    await m.mount(fresh, 0o755, undefined);
    expect(asked).toEqual([]);
    expect(calls).toEqual([`mount -t tmpfs -o mode=0755 tmpfs ${fresh}`]);
    await m.mount(fresh, 0o755, undefined); // there now, and "mounted": left as is
    expect(asked).toEqual([fresh]);
    expect(calls).toHaveLength(1);
  });

  it("with the Perl helper's mount-new: a new dir is made and mounted in one call; a dir that was there is mounted only when the table says it is not", async () => {
    const asked: string[] = [];
    const calls: string[] = [];
    const inTable = new Set<string>();
    const m = createTmpfsMounter({
      enabled: true,
      mountNew: true,
      isMounted: async (d) => (asked.push(d), inTable.has(d)),
      // The helper's answer: the hex of the first level made, '-' when the dir was there.
      exec: async (cmd, args) => (calls.push(`${cmd} ${args.join(' ')}`), cmd === 'mount-new' && args.at(-1)!.endsWith('new') ? '6e6577' : '-'),
    });
    const fresh = path.join(dir, 'new');
    await m.mount(fresh, 0o750, 1024);
    expect(calls).toEqual([`mount-new 777 -t tmpfs -o mode=0750,size=1024 tmpfs ${fresh}`]);
    expect(asked).toEqual([]);
    const there = path.join(dir, 'there');
    inTable.add(there);
    await m.mount(there, 0o750, undefined); // mounted already: left as is
    expect(calls.slice(1)).toEqual([`mount-new 777 -t tmpfs -o mode=0750 tmpfs ${there}`]);
    inTable.clear();
    await m.mount(there, 0o750, undefined); // a plain dir: mounted now
    expect(calls.slice(2)).toEqual([`mount-new 777 -t tmpfs -o mode=0750 tmpfs ${there}`, `mount -t tmpfs -o mode=0750 tmpfs ${there}`]);
    expect(asked).toEqual([there, there]);
  });

  it('detaches a busy mount (umount -l) so that tear-down goes on', async () => {
    const calls: string[] = [];
    const m = createTmpfsMounter({
      enabled: true,
      isMounted: async () => true,
      exec: async (cmd, args) => {
        calls.push(`${cmd} ${args.join(' ')}`);
        if (args.length === 1) throw Object.assign(new Error('exit 32'), { stderr: 'umount: /v: target is busy.' });
      },
    });
    expect(await m.unmount('/v')).toBe('detached');
    expect(calls).toEqual(['umount /v', 'umount -l /v']);
  });

  it('with the Perl helper, tear-down asks umount2 (umount-mounted) instead of reading the mount table per volume', async () => {
    const calls: string[] = [];
    const asked: string[] = [];
    const answers: Record<string, () => string> = {
      '/plain': () => '-',
      '/mounted': () => '+',
      '/busy': () => {
        throw Object.assign(new Error('exit 32'), { stderr: 'umount: /busy: Device or resource busy' });
      },
    };
    const m = createTmpfsMounter({
      enabled: true,
      mountNew: true,
      isMounted: async (d) => {
        asked.push(d);
        return true;
      },
      exec: async (cmd, args) => {
        calls.push(`${cmd} ${args.join(' ')}`);
        return cmd === 'umount-mounted' ? `${answers[args[0]!]!()}\n` : '';
      },
    });
    expect(await m.unmount('/plain')).toBe('none');
    expect(await m.unmount('/mounted')).toBe('unmounted');
    expect(await m.unmount('/busy')).toBe('detached');
    expect(calls).toEqual(['umount-mounted /plain', 'umount-mounted /mounted', 'umount-mounted /busy', 'umount -l /busy']);
    expect(asked).toEqual([]);
  });

  it('sizes a Memory emptyDir without sizeLimit by the pod memory limit', () => {
    const p = pod({
      containers: [
        { name: 'a', resources: { limits: { memory: '128Mi' } } },
        { name: 'b', resources: { limits: { memory: '64Mi' } } },
      ],
    });
    expect(memoryEmptyDirSize({ name: 'm', emptyDir: { medium: 'Memory' } }, p)).toBe(192 * 1024 * 1024);
    expect(memoryEmptyDirSize({ name: 'm', emptyDir: { medium: 'Memory' } }, pod({ containers: [{ name: 'a' }] }))).toBeUndefined();
  });

  it('not root: plain directories, one warning per mounter, and a note on each volume', async () => {
    const f = fakeMounter(false);
    const lines: string[] = [];
    const prepared = await prepare(f.m, lines);
    await prepare(f.m, lines);
    expect(f.calls).toEqual([]);
    expect(lines.filter((l) => l.includes('does not run as root'))).toHaveLength(1);
    expect(prepared.get('creds')!.notes).toEqual(["the secret volume is a plain directory on the node's disk: nodelet does not run as root (no tmpfs)"]);
  });

  it.skipIf(process.getuid?.() !== 0)('really mounts and unmounts a tmpfs as root (skipped when not root: mounting needs CAP_SYS_ADMIN)', async () => {
    const m = createTmpfsMounter({ enabled: true });
    const target = path.join(dir, 'real');
    await m.mount(target, 0o755, 1024 * 1024);
    try {
      expect(await isMountPoint(target)).toBe(true);
      await writeFile(path.join(target, 'x'), 'in memory');
    } finally {
      await m.unmount(target);
    }
    expect(await isMountPoint(target)).toBe(false);
  });
});

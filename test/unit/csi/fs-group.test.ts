// fsGroup on CSI volumes: upstream supportsFSGroup + VOLUME_MOUNT_GROUP delegation, and SetVolumeOwnership.
import { mkdtemp, mkdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1CSIDriver, V1Pod } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fsGroupAction, setVolumeOwnership } from '../../../core/volumes/csi/fs-group.ts';
import type { CsiVolumeSpec } from '../../../core/volumes/csi/volume-spec.ts';

const pod = (fsGroup?: number, changePolicy?: string): V1Pod => ({ spec: { containers: [], securityContext: { fsGroup, fsGroupChangePolicy: changePolicy } } });
const spec = (o: Partial<CsiVolumeSpec> = {}): CsiVolumeSpec => ({
  mode: 'Persistent',
  driver: 'd',
  volumeHandle: 'h',
  specName: 'pv',
  readOnly: false,
  fsType: 'ext4',
  attributes: {},
  mountOptions: [],
  accessMode: 'ReadWriteOnce',
  accessModes: ['ReadWriteOnce'],
  ...o,
});
const driver = (fsGroupPolicy?: string): V1CSIDriver => ({ metadata: { name: 'd' }, spec: { fsGroupPolicy } });

describe('fsGroupAction (upstream supportsFSGroup)', () => {
  it('nothing without fsGroup, with policy None, or read-only', () => {
    expect(fsGroupAction(pod(), spec(), driver('File'), false)).toEqual({ kind: 'none' });
    expect(fsGroupAction(pod(5), spec(), driver('None'), false)).toEqual({ kind: 'none' });
    expect(fsGroupAction(pod(5), spec({ readOnly: true }), driver('File'), false)).toEqual({ kind: 'none' });
  });

  it('File: always; ReadWriteOnceWithFSType (also the default): needs fsType and RWO (inline counts as RWO)', () => {
    expect(fsGroupAction(pod(5), spec({ fsType: '', accessModes: ['ReadWriteMany'] }), driver('File'), false)).toEqual({
      kind: 'nodelet',
      gid: 5,
      onRootMismatch: false,
    });
    expect(fsGroupAction(pod(5), spec({ fsType: '' }), driver('ReadWriteOnceWithFSType'), false)).toEqual({ kind: 'none' });
    expect(fsGroupAction(pod(5), spec({ accessModes: ['ReadWriteMany'] }), undefined, false)).toEqual({ kind: 'none' });
    expect(fsGroupAction(pod(5), spec({ accessModes: ['ReadOnlyMany', 'ReadWriteOnce'] }), undefined, false).kind).toBe('nodelet');
    expect(fsGroupAction(pod(5), spec({ mode: 'Ephemeral', accessModes: [] }), driver(), false).kind).toBe('nodelet');
  });

  it('delegates to a driver with VOLUME_MOUNT_GROUP; OnRootMismatch is passed on', () => {
    expect(fsGroupAction(pod(7), spec(), driver('File'), true)).toEqual({ kind: 'delegate', gid: 7 });
    expect(fsGroupAction(pod(7, 'OnRootMismatch'), spec(), driver('File'), false)).toEqual({ kind: 'nodelet', gid: 7, onRootMismatch: true });
  });
});

describe('setVolumeOwnership', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ndl-fsgroup-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(process.getuid?.() !== 0)('sets the group, g+rw on files, g+rwx and setgid on dirs; symlinks untouched (needs root to chown)', async () => {
    await mkdir(join(dir, 'sub'), { mode: 0o700 });
    await writeFile(join(dir, 'sub', 'f'), 'x', { mode: 0o600 });
    await symlink('/etc/hostname', join(dir, 'link'));
    await setVolumeOwnership(dir, 4242, false);
    const f = await stat(join(dir, 'sub', 'f'));
    const sub = await stat(join(dir, 'sub'));
    expect([f.gid, f.mode & 0o7777]).toEqual([4242, 0o660]);
    expect([sub.gid, sub.mode & 0o7777]).toEqual([4242, 0o2770]);
    expect((await stat('/etc/hostname')).gid).not.toBe(4242);
  });
});

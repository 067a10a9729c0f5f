/**
 * `fsGroup` on CSI volumes, after upstream csi_mounter.go: the CSIDriver's
 * `fsGroupPolicy` says whether the pod's `securityContext.fsGroup` applies
 * (`supportsFSGroup`), and who applies it:
 *
 *   fsGroup unset, policy None, or read-only ──► nothing
 *   policy File ──► applies
 *   policy ReadWriteOnceWithFSType (the default) ──► applies when fsType is set and
 *        the PV has ReadWriteOnce (an inline volume always counts as RWO)
 *   applies + driver offers VOLUME_MOUNT_GROUP ──► delegated: NodePublishVolume's
 *        volume_capability.mount.volume_mount_group = fsGroup
 *   applies otherwise ──► nodelet sets the ownership of the published tree
 *        (upstream SetVolumeOwnership: group fsGroup, g+rw, dirs g+x and setgid;
 *        fsGroupChangePolicy OnRootMismatch skips a root that already matches)
 *
 * For WASI containers ownership changes nothing (a module has no uid/gid and
 * nodelet opens files itself); it matters to whatever else reads the volume.
 */
import { lstat, lchown, chmod, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { V1CSIDriver, V1Pod } from '@kubernetes/client-node';
import type { CsiVolumeSpec } from './volume-spec.ts';

/** Who applies the pod's fsGroup to a CSI volume. */
export type FsGroupAction = { kind: 'none' } | { kind: 'delegate'; gid: number } | { kind: 'nodelet'; gid: number; onRootMismatch: boolean };

/** Upstream `supportsFSGroup` plus the VOLUME_MOUNT_GROUP delegation. */
export function fsGroupAction(pod: V1Pod, spec: CsiVolumeSpec, csiDriver: V1CSIDriver | undefined, volumeMountGroup: boolean): FsGroupAction {
  const gid = pod.spec?.securityContext?.fsGroup;
  const policy = csiDriver?.spec?.fsGroupPolicy ?? 'ReadWriteOnceWithFSType';
  if (gid === undefined || gid === null || policy === 'None' || spec.readOnly) return { kind: 'none' };
  if (policy !== 'File') {
    if (spec.fsType === '') return { kind: 'none' };
    if (spec.mode === 'Persistent' && !spec.accessModes.includes('ReadWriteOnce')) return { kind: 'none' };
  }
  if (volumeMountGroup) return { kind: 'delegate', gid };
  return { kind: 'nodelet', gid, onRootMismatch: pod.spec?.securityContext?.fsGroupChangePolicy === 'OnRootMismatch' };
}

const RW_MASK = 0o660;
const EXEC_MASK = 0o110;
const SETGID = 0o2000;

/** Upstream `SetVolumeOwnership` (not following symlinks). */
export async function setVolumeOwnership(dir: string, gid: number, onRootMismatch: boolean): Promise<void> {
  const root = await lstat(dir);
  if (onRootMismatch && root.gid === gid && (root.mode & SETGID) !== 0 && (root.mode & RW_MASK) === RW_MASK) return;
  const walk = async (p: string): Promise<void> => {
    const st = await lstat(p);
    if (st.isSymbolicLink()) return;
    await lchown(p, st.uid, gid);
    const mask = st.isDirectory() ? RW_MASK | EXEC_MASK | SETGID : RW_MASK;
    await chmod(p, (st.mode & 0o7777) | mask);
    if (st.isDirectory()) for (const name of await readdir(p)) await walk(path.join(p, name));
  };
  await walk(dir);
}

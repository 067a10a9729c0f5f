/**
 * Staging and unstaging persistent CSI volumes (upstream csi_attacher.go
 * MountDevice / UnmountDevice): one global staging path per volume per node.
 *
 *   stage:   mkdir <data>/globalmount → vol_data.json → NodeStageVolume ─ok─► staged
 *              ├─ final error (upstream isFinalError) ──► remove vol_data.json and the dirs: not staged
 *              └─ other error (Unavailable, DeadlineExceeded, ...) ──► uncertain: the trace stays,
 *                 so the next set-up retries NodeStage and the last user's tear-down unstages
 *   unstage: NodeUnstageVolume → (not a mount point any more) → remove
 *            vol_data.json, globalmount, <data> → unstaged
 *
 * vol_data.json is written before the call, so a crash in between still
 * leaves a trace that {@link StageRefs.recover} picks up.
 */
import { mkdir, rmdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { NodeClient, VolumeCapability } from '../../../sockets/csi.ts';
import { errorDetail, nodeletError } from '../../errors/index.ts';
import { isFinalCsiError, nodeStageVolume, nodeUnstageVolume } from './csi-node-calls.ts';
import { csiLog, stagingDataDir, stagingTargetPath, VOL_DATA_FILE } from './csi-paths.ts';
import { isMountPoint } from './mount-info.ts';
import type { StageRefs } from './stage-refs.ts';
import { loadVolData, saveVolData } from './vol-data.ts';

/** What staging a volume needs. */
export interface StageRequest {
  readonly pluginsDir: string;
  readonly driver: string;
  readonly volumeHandle: string;
  readonly capability: VolumeCapability;
  readonly publishContext: Record<string, string>;
  readonly secrets: Record<string, string>;
  readonly volumeContext: Record<string, string>;
}

/** Stages the volume unless it is already staged; returns the staging target path. */
export async function stageVolume(client: NodeClient, refs: StageRefs, r: StageRequest): Promise<string> {
  const staging = stagingTargetPath(r.pluginsDir, r.driver, r.volumeHandle);
  if (refs.isStaged(staging)) return staging;
  await mkdir(staging, { recursive: true, mode: 0o750 });
  await saveVolData(path.dirname(staging), { specVolID: r.volumeHandle, driverName: r.driver, volumeHandle: r.volumeHandle });
  try {
    await nodeStageVolume(client, {
      volume_id: r.volumeHandle,
      publish_context: r.publishContext,
      staging_target_path: staging,
      volume_capability: r.capability,
      secrets: r.secrets,
      volume_context: r.volumeContext,
    });
  } catch (e) {
    // Upstream csi_attacher MountDevice: after a final error nothing is staged, so the staging dir goes.
    if (isFinalCsiError(e) && !(await isMountPoint(staging))) await removeStagingDirs(r.pluginsDir, r.driver, r.volumeHandle);
    throw e;
  }
  refs.markStaged({ driver: r.driver, volumeHandle: r.volumeHandle, stagingPath: staging });
  return staging;
}

/** True when the volume is staged (in memory, or a staging trace is on disk). */
export async function isStaged(refs: StageRefs, pluginsDir: string, driver: string, volumeHandle: string): Promise<boolean> {
  const staging = stagingTargetPath(pluginsDir, driver, volumeHandle);
  return refs.isStaged(staging) || (await loadVolData(path.dirname(staging)).catch(() => undefined)) !== undefined;
}

/** NodeUnstageVolume, then removes the staging dirs; throws upstream-worded errors. */
export async function unstageVolume(client: NodeClient, refs: StageRefs, pluginsDir: string, driver: string, volumeHandle: string): Promise<void> {
  const staging = stagingTargetPath(pluginsDir, driver, volumeHandle);
  try {
    await nodeUnstageVolume(client, { volume_id: volumeHandle, staging_target_path: staging });
  } catch (e) {
    throw nodeletError('NDL_CSI_VOLUME', csiLog(`attacher.UnmountDevice failed: ${errorDetail(e)}`), e);
  }
  if (await isMountPoint(staging)) {
    throw nodeletError('NDL_CSI_VOLUME', csiLog(`attacher.UnmountDevice failed: ${staging} is still mounted after NodeUnstageVolume`));
  }
  await removeStagingDirs(pluginsDir, driver, volumeHandle);
  refs.markUnstaged(staging);
}

/** Removes the staging target, its vol_data.json and its data dir (not mounted any more). */
async function removeStagingDirs(pluginsDir: string, driver: string, volumeHandle: string): Promise<void> {
  const staging = stagingTargetPath(pluginsDir, driver, volumeHandle);
  const dataDir = stagingDataDir(pluginsDir, driver, volumeHandle);
  await rmdir(staging).catch(ignoreMissing);
  await unlink(path.join(dataDir, VOL_DATA_FILE)).catch(ignoreMissing);
  await rmdir(dataDir).catch(ignoreMissing);
  await rmdir(path.dirname(dataDir)).catch(() => undefined);
}

function ignoreMissing(e: unknown): void {
  if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
}

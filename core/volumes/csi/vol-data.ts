/**
 * `vol_data.json`: what the CSI plugin writes next to a publish target (and a
 * staging target) before calling the driver, so the volume can be torn down
 * later — also after a nodelet restart — from the directory alone. Keys as
 * upstream (`volDataKey` in csi_mounter.go).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { nodeletError } from '../../errors/index.ts';
import { replaceFile } from '../../paths/index.ts';
import { VOL_DATA_FILE } from './csi-paths.ts';

/** Upstream `storage.VolumeLifecycleMode`. */
export type VolumeLifecycleMode = 'Persistent' | 'Ephemeral';

/** The saved facts of one volume. */
export interface VolData {
  readonly specVolID: string;
  readonly volumeHandle: string;
  readonly driverName: string;
  readonly nodeName?: string;
  readonly attachmentID?: string;
  readonly volumeLifecycleMode?: VolumeLifecycleMode;
  /**
   * nodelet's own key: true when nothing can be published at the target — its
   * NodeStageVolume failed (NodePublish never called) or its NodePublishVolume
   * failed with a final error — so tear-down skips NodeUnpublishVolume, as
   * upstream's reconciler unmounts only what its actual state holds.
   */
  readonly notPublished?: boolean;
}

/** Writes `<dir>/vol_data.json` atomically (temp file + rename; a failed write leaves the old one and no temporary file). */
export async function saveVolData(dir: string, data: VolData): Promise<void> {
  await replaceFile(path.join(dir, VOL_DATA_FILE), JSON.stringify(data), 0o640);
}

/** Reads `<dir>/vol_data.json`; undefined when it does not exist. Throws on a corrupt file. */
export async function loadVolData(dir: string): Promise<VolData | undefined> {
  let text: string;
  try {
    text = await readFile(path.join(dir, VOL_DATA_FILE), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  const d = JSON.parse(text) as Partial<VolData>;
  if (typeof d.volumeHandle !== 'string' || typeof d.driverName !== 'string') {
    throw nodeletError('NDL_CSI_VOLUME', `volume data file ${path.join(dir, VOL_DATA_FILE)} lacks volumeHandle/driverName`);
  }
  return d as VolData;
}

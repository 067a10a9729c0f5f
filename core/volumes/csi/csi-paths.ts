/**
 * Names, constants and on-disk layout of the CSI volume plugin, as upstream
 * (`pkg/volume/csi`):
 *
 *   <rootDir>/plugins/kubernetes.io/csi/<driver>/<sha256(volumeHandle)>/globalmount   staging target
 *   <rootDir>/plugins/kubernetes.io/csi/<driver>/<sha256(volumeHandle)>/vol_data.json  written before NodeStageVolume
 *   <podDir>/volumes/kubernetes.io~csi/<name>/mount                                    publish target
 *   <podDir>/volumes/kubernetes.io~csi/<name>/vol_data.json                            written before NodePublishVolume
 *
 * `<name>` is the pod's volume name for inline volumes and the PV name for
 * PVC-backed ones (upstream `spec.Name()`).
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { validateName } from '../../paths/index.ts';

/** Upstream `CSIPluginName`. */
export const CSI_PLUGIN_NAME = 'kubernetes.io/csi';
/** Upstream `csiTimeout`: the deadline of every Node service call. */
export const CSI_TIMEOUT_MS = 2 * 60_000;
/** Upstream `volDataFileName`. */
export const VOL_DATA_FILE = 'vol_data.json';
/** Upstream `globalMountInGlobalPath`. */
const GLOBAL_MOUNT = 'globalmount';
/** The Node annotation holding the JSON map driver → node ID. */
export const NODE_ID_ANNOTATION = 'csi.volume.kubernetes.io/nodeid';

/** Upstream's `log()` prefix for CSI messages. */
export function csiLog(msg: string): string {
  return `${CSI_PLUGIN_NAME}: ${msg}`;
}

/** Lower-case hex sha256 of a string. */
export function sha256Hex(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

/** Upstream `makeVolumeHandle`: the volume ID of an inline ephemeral volume. */
export function inlineVolumeHandle(podUID: string, volumeName: string): string {
  return `csi-${sha256Hex(`${podUID}${volumeName}`)}`;
}

/** Upstream `getAttachmentName`: the VolumeAttachment name of a volume on a node. */
export function attachmentName(volumeHandle: string, driver: string, nodeName: string): string {
  return `csi-${sha256Hex(`${volumeHandle}${driver}${nodeName}`)}`;
}

/** `<pluginsDir>/kubernetes.io/csi/<driver>/<sha256(handle)>`: holds globalmount and vol_data.json. */
export function stagingDataDir(pluginsDir: string, driver: string, volumeHandle: string): string {
  validateName(driver, driver, 'CSI driver name');
  return path.join(pluginsDir, CSI_PLUGIN_NAME, driver, sha256Hex(volumeHandle));
}

/** Upstream `makeDeviceMountPath`: the staging target path of a volume. */
export function stagingTargetPath(pluginsDir: string, driver: string, volumeHandle: string): string {
  return path.join(stagingDataDir(pluginsDir, driver, volumeHandle), GLOBAL_MOUNT);
}

/** The publish target inside a volume dir (upstream `GetCSIMounterPath`). */
export function publishTargetPath(volumeDir: string): string {
  return path.join(volumeDir, 'mount');
}

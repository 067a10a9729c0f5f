/**
 * The API reads of the CSI volume plugin (PVC → PV, CSIDriver,
 * VolumeAttachment) behind a small interface; unit tests use a fake.
 * Rejections carry the apiserver's message (`persistentvolumeclaims "x" not found`).
 */
import type { V1CSIDriver, V1PersistentVolume, V1PersistentVolumeClaim, V1VolumeAttachment } from '@kubernetes/client-node';
import { apiError, isApiNotFound, type KubeClients } from '../../kube/index.ts';

/** Reads the CSI volume plugin makes. */
export interface CsiVolumeApi {
  readPVC(namespace: string, name: string): Promise<V1PersistentVolumeClaim>;
  readPV(name: string): Promise<V1PersistentVolume>;
  /** undefined when the driver has no CSIDriver object. */
  readCSIDriver(name: string): Promise<V1CSIDriver | undefined>;
  readVolumeAttachment(name: string): Promise<V1VolumeAttachment>;
}

async function withMessage<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    throw apiError(e);
  }
}

/** The real API behind {@link CsiVolumeApi}. */
export function csiVolumeApi(clients: Pick<KubeClients, 'core' | 'storage'>): CsiVolumeApi {
  return {
    readPVC: (namespace, name) => withMessage(clients.core.readNamespacedPersistentVolumeClaim({ namespace, name })),
    readPV: (name) => withMessage(clients.core.readPersistentVolume({ name })),
    async readCSIDriver(name) {
      try {
        return await clients.storage.readCSIDriver({ name });
      } catch (e) {
        if (isApiNotFound(e)) return undefined;
        throw apiError(e);
      }
    },
    readVolumeAttachment: (name) => withMessage(clients.storage.readVolumeAttachment({ name })),
  };
}

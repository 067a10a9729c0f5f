/**
 * What the CSI plugin needs to know about one pod volume, from either an
 * inline `volumes[].csi` source (Ephemeral) or a PVC bound to a PV with
 * `spec.csi` (Persistent). Errors read like upstream's.
 */
import type { V1Pod, V1Volume } from '@kubernetes/client-node';
import { errorDetail, nodeletError } from '../../errors/index.ts';
import { inlineVolumeHandle } from './csi-paths.ts';
import type { CsiVolumeApi } from './volume-api.ts';
import type { VolumeLifecycleMode } from './vol-data.ts';

/** A secret reference (namespace resolved). */
export interface SecretRef {
  readonly namespace: string;
  readonly name: string;
}

/** One CSI volume of a pod, resolved. */
export interface CsiVolumeSpec {
  readonly mode: VolumeLifecycleMode;
  readonly driver: string;
  readonly volumeHandle: string;
  /** The volume dir name: the pod's volume name (inline) or the PV name (upstream `spec.Name()`). */
  readonly specName: string;
  readonly readOnly: boolean;
  readonly fsType: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly mountOptions: readonly string[];
  /** The Kubernetes access mode (`ReadWriteOnce`, ...). */
  readonly accessMode: string;
  /** All access modes of the PV (inline: `ReadWriteOnce`). */
  readonly accessModes: readonly string[];
  readonly publishSecretRef?: SecretRef;
  readonly stageSecretRef?: SecretRef;
}

/** True for the volumes the CSI plugin handles: inline `csi` and `persistentVolumeClaim`. */
export function isCsiCandidate(volume: V1Volume): boolean {
  return volume.csi != null || volume.persistentVolumeClaim != null;
}

/** Resolves `volume` of `pod`; reads the PVC and its PV for claims. */
export async function resolveCsiVolume(volume: V1Volume, pod: V1Pod, api: CsiVolumeApi): Promise<CsiVolumeSpec> {
  const ns = pod.metadata?.namespace ?? 'default';
  if (volume.csi) {
    const src = volume.csi;
    return {
      mode: 'Ephemeral',
      driver: src.driver,
      volumeHandle: inlineVolumeHandle(pod.metadata?.uid ?? '', volume.name),
      specName: volume.name,
      readOnly: src.readOnly ?? false,
      fsType: src.fsType ?? '',
      attributes: { ...src.volumeAttributes },
      mountOptions: [],
      accessMode: 'ReadWriteOnce',
      accessModes: ['ReadWriteOnce'],
      publishSecretRef: src.nodePublishSecretRef?.name ? { namespace: ns, name: src.nodePublishSecretRef.name } : undefined,
    };
  }
  const claimName = volume.persistentVolumeClaim?.claimName ?? '';
  const fail = (msg: string, cause?: unknown): never => {
    throw nodeletError('NDL_VOLUME_SOURCE', `error processing PVC ${ns}/${claimName}: ${msg}`, cause);
  };
  const pvc = await api.readPVC(ns, claimName).catch((e) => fail(`failed to fetch PVC from API server: ${errorDetail(e)}`, e));
  if (pvc.metadata?.deletionTimestamp) {
    throw nodeletError('NDL_VOLUME_SOURCE', `can't start pod because PVC ${ns}/${claimName} is being deleted`);
  }
  const pvName = pvc.spec?.volumeName ?? '';
  if (pvc.status?.phase !== 'Bound' || pvName === '') {
    throw nodeletError(
      'NDL_VOLUME_SOURCE',
      `PVC ${ns}/${claimName} has non-bound phase (${q(pvc.status?.phase ?? '')}) or empty pvc.Spec.VolumeName (${q(pvName)})`,
    );
  }
  const pv = await api.readPV(pvName).catch((e) => fail(`failed to fetch PV ${pvName} from API server: ${errorDetail(e)}`, e));
  const claimRef = pv.spec?.claimRef;
  if (!claimRef) fail(`found PV object ${pvName} but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim`);
  if (claimRef!.uid !== pvc.metadata?.uid) {
    fail(`found PV object ${pvName} but its pv.Spec.ClaimRef.UID (${claimRef!.uid ?? ''}) does not point to claim.UID (${pvc.metadata?.uid ?? ''})`);
  }
  const csi = pv.spec?.csi;
  if (!csi) {
    throw nodeletError(
      'NDL_VOLUME_UNSUPPORTED',
      `volume ${q(volume.name)}: PV ${pvName} bound to PVC ${ns}/${claimName} is not a CSI volume; only CSI persistent volumes are supported on this node`,
    );
  }
  if (pv.spec?.volumeMode === 'Block') {
    throw nodeletError(
      'NDL_VOLUME_UNSUPPORTED',
      `volume ${q(volume.name)}: PV ${pvName} has volumeMode Block; only Filesystem volumes are supported on this node`,
    );
  }
  return {
    mode: 'Persistent',
    driver: csi.driver,
    volumeHandle: csi.volumeHandle,
    specName: pvName,
    readOnly: (volume.persistentVolumeClaim?.readOnly ?? false) || (csi.readOnly ?? false),
    fsType: csi.fsType ?? '',
    attributes: { ...csi.volumeAttributes },
    mountOptions: [...(pv.spec?.mountOptions ?? [])],
    accessMode: pv.spec?.accessModes?.[0] ?? 'ReadWriteOnce',
    accessModes: pv.spec?.accessModes ?? [],
    publishSecretRef: secretRef(csi.nodePublishSecretRef),
    stageSecretRef: secretRef(csi.nodeStageSecretRef),
  };
}

function secretRef(r: { name?: string; namespace?: string } | undefined): SecretRef | undefined {
  return r?.name ? { namespace: r.namespace ?? 'default', name: r.name } : undefined;
}

/** Upstream `asCSIAccessModeV1` / `asSingleNodeMultiWriterCapableCSIAccessModeV1`. */
export function csiAccessMode(accessMode: string, singleNodeMultiWriter: boolean): string {
  switch (accessMode) {
    case 'ReadWriteOnce':
      return singleNodeMultiWriter ? 'SINGLE_NODE_MULTI_WRITER' : 'SINGLE_NODE_WRITER';
    case 'ReadOnlyMany':
      return 'MULTI_NODE_READER_ONLY';
    case 'ReadWriteMany':
      return 'MULTI_NODE_MULTI_WRITER';
    case 'ReadWriteOncePod':
      return singleNodeMultiWriter ? 'SINGLE_NODE_SINGLE_WRITER' : 'SINGLE_NODE_WRITER';
    default:
      return 'UNKNOWN';
  }
}

/** Upstream `getPodInfoAttrs`. */
export function podInfoAttributes(pod: V1Pod, mode: VolumeLifecycleMode): Record<string, string> {
  return {
    'csi.storage.k8s.io/pod.name': pod.metadata?.name ?? '',
    'csi.storage.k8s.io/pod.namespace': pod.metadata?.namespace ?? '',
    'csi.storage.k8s.io/pod.uid': pod.metadata?.uid ?? '',
    'csi.storage.k8s.io/serviceAccount.name': pod.spec?.serviceAccountName ?? '',
    'csi.storage.k8s.io/ephemeral': String(mode === 'Ephemeral'),
  };
}

function q(s: string): string {
  return JSON.stringify(s);
}

/** The face of core/pods: what other folders may use; everything else in the folder is private to it. */
export type { AdmitResult } from './admission.ts';
export { PodController, type ProviderRouter } from './pod-controller.ts';
export { createPodSetup } from './pod-setup-impl.ts';
export type { PodSetup } from './pod-setup.ts';
export { mergePodConditions, podConditions } from './pod-status.ts';
export { parseQuantity } from './quantity.ts';
export { apiStatusSink, startApiPodSource } from './sources/api-pod-source.ts';
export { memoryStatusSink } from './sources/memory-status-sink.ts';
export { ensureMirrorPod, mirrorAwareSink } from './sources/mirror-pods.ts';
export { reportRefusedManifests } from './sources/refused-manifests.ts';
export { readStaticPods } from './sources/static-pod-source.ts';

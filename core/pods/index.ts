/**
 * The face of `core/pods/`: what other core folders may use. (The pod path's
 * inner files — the worker, its drivers, status reports — stay private.)
 */
export type { ProviderRouter } from './pod-controller.ts';
export { podRequest, predicateAdmitHandler } from './admission.ts';
export {
  admitContext,
  type AdmitContext,
  type AdmitNode,
  type AdmitResult,
  type AllocatableContributor,
  fixedAllocatable,
  type PodAdmitHandler,
  runAdmitHandlers,
} from './admit-handler.ts';
export type { PodAllocation, ResizeActuation } from './pod-allocation.ts';
export { isResizable } from './container-resize.ts';
export { podQosClass } from './container-limits.ts';
export { observedGenerationContributor } from './observed-generation.ts';
export type { ContainerOptionsContributor, ContainerWarning } from './container-options.ts';
export type { PodResourcePreparer } from './pod-resources.ts';
export type { PodStatusContributor } from './pod-status-contributor.ts';
export type { PodNetwork } from './pod-network.ts';
export { PodController } from './pod-controller.ts';
export type { AbnormalTermination } from './pod-state.ts';
export { PodStore, type PodReader } from './pod-store.ts';
export { PodStarts } from './pod-starts.ts';
export { createPodSetup } from './pod-setup-impl.ts';
export { startApiPodSource } from './sources/api-pod-source.ts';
export { apiStatusSink } from './status-sinks/api-status-sink.ts';
export { memoryStatusSink } from './status-sinks/memory-status-sink.ts';
export { ensureMirrorPod, deleteMirrorPod } from './sources/mirror-pods.ts';
export { mirrorAwareSink } from './status-sinks/mirror-aware-sink.ts';
export { reportRefusedManifests } from './sources/refused-manifests.ts';
export { readStaticPods, type RefusedManifest } from './sources/static-pod-source.ts';
export { watchStaticPods, type StaticPodChanges } from './sources/static-pod-watcher.ts';
export { claimedContainerIds, releaseUnclaimedContainers } from './container-adoption.ts';
export { deleteDanglingPods } from './dangling-pods.ts';

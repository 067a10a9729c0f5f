/**
 * In-place pod resize (KEP-1287) as the pod path sees it: the resources allocated to each
 * pod's containers, and what runs with them. core/allocation implements both interfaces
 * (upstream's allocation manager, `pkg/kubelet/allocation`, and the resize conditions of its
 * status manager); the composition root hands them to the pod controller, which hands
 * {@link ResizeActuation} to each container driver (container-resize.ts).
 *
 *   source update (resources changed) ──► PodAllocation.updated ──► allocated | PodResizePending
 *   sync ──► allocatedPod(pod) ──► worker.reconcile: containers start with the allocated resources;
 *            running ones whose resources differ are resized (in place, or restarted by policy)
 *            ──► ResizeActuation: actuated resources recorded, PodResizeInProgress set / cleared / Error
 */
import type { V1Pod, V1ResourceRequirements } from '@kubernetes/client-node';

/** The allocation side, called by the pod controller. */
export interface PodAllocation {
  /**
   * `pod` with each container's resources as allocated (upstream `UpdatePodFromAllocation`):
   * what the pod runs with while a resize is pending. `pod` itself when nothing differs or it
   * has no allocation yet.
   */
  allocatedPod(pod: V1Pod): V1Pod;
  /**
   * Runs `fn` with no resize decision in between (upstream's allocation mutex): the controller
   * admits pods through it, so that an admission and a resize never count the same free
   * resources twice.
   */
  serially<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * `pod` was admitted with {@link PodAllocation.allocatedPod}'s resources: they are
   * checkpointed. A pod admitted again after a restart whose spec differs from its checkpointed
   * allocation has a pending resize: it is decided once the sources are ready.
   */
  admitted(pod: V1Pod): void;
  /** The source replaced `prev` with `pod`: a change of container resources is a resize, decided now (asynchronously). */
  updated(prev: V1Pod, pod: V1Pod): void;
  /** Pod `uid` is gone from the node: its allocation and resize state are dropped; deferred resizes of others are tried again. */
  removed(uid: string): void;
  /** Pod `uid` finished (its containers stopped for good): deferred resizes of others are tried again. */
  finished(uid: string): void;
  /** What container drivers use. */
  readonly actuation: ResizeActuation;
}

/** The actuation side, called by a container driver for its pod (upstream's runtime manager part). */
export interface ResizeActuation {
  /** The resources container `name`'s current run has (upstream's actuated state); undefined when none was recorded. */
  actuated(podUid: string, name: string): V1ResourceRequirements | undefined;
  /** Records what container `name`'s run has now: at its start, and once an in-place resize took effect. */
  setActuated(podUid: string, name: string, resources: V1ResourceRequirements): void;
  /** A running container's resources differ from those allocated: `PodResizeInProgress` (kept as it is when set). */
  inProgress(pod: V1Pod): void;
  /** None differ any more: `PodResizeInProgress` is cleared (a `ResizeCompleted` event when it was set). */
  completed(pod: V1Pod): void;
  /** Actuating failed: `PodResizeInProgress` with reason `Error` and `message` (a `ResizeError` event when that is new). */
  failed(pod: V1Pod, message: string): void;
}

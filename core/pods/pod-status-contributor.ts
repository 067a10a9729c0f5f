/**
 * The pod-status extension point, like upstream's container manager
 * `UpdateAllocatedResourcesStatus` called while the kubelet builds a pod's
 * status: subsystems that own part of a container's status (DRA: each
 * claim's device health in `allocatedResourcesStatus`) add it to the status
 * the pod worker computed, before the controller compares it with what it
 * posted last and patches it.
 *
 *   worker.status(pod) ──► contributor[0].contribute ──► contributor[1]… ──► changed? patch
 *
 * A contributor whose data changes (a device became unhealthy) asks the pod
 * controller to sync the pods concerned (`PodController.resyncPods`).
 */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';

/** Adds a subsystem's part to a pod's status. */
export interface PodStatusContributor {
  /** For logs: what this contributes (`dra`). */
  readonly name: string;
  /** The status with this contributor's part (pure: no I/O, must not throw; returns `status` when it adds nothing). */
  contribute(pod: V1Pod, status: V1PodStatus): V1PodStatus;
}

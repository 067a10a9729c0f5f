/**
 * The face of core/allocation: in-place pod resize (KEP-1287) — the resources allocated to
 * each pod's containers and checkpointed, the decision on each resize, and the resize part of
 * pod statuses (upstream's `pkg/kubelet/allocation` and the resize conditions of its status
 * manager). The pod path sees it through `PodAllocation` (core/pods/pod-allocation.ts).
 */
export { AllocationManager, type AllocationManagerOptions } from './allocation-manager.ts';

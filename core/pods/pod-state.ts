/**
 * A pod's state on this node: one value per pod, moved only by {@link advance}
 * (the pod controller calls it; upstream's kubelet keeps the same facts in its
 * per-pod `podSyncStatus` and walks them through `SyncPod`,
 * `SyncTerminatingPod` and `SyncTerminatedPod`).
 *
 *              admit()                  sync()                  sync(): containers stopped for good
 *   (new) ──────────────► admitted ──first──────► running ──────────────────────────────► finished ──unmounted──► finished
 *     │ admit() refused       │                       │                                (volumes mounted)        (volumes gone)
 *     ├──────────────► rejected                       │
 *     │ admit(): phase already Succeeded/Failed       │ terminateAbnormally() (node shutdown, eviction)
 *     └──────────────► finished (volumes mounted)     └─────────────────────────► failed
 *
 *   any state ── deleting(): containers stopped, volumes, dir and pod IPs gone ──► torn-down ──object deleted──► deleted
 *   any state ── gone from the source, or replaced by a pod with another uid: forget() ──► (no state)
 *
 * `admitted` and `running` are the active states (their containers may run);
 * `running` only says the pod's first sync began (its start is counted once,
 * see {@link PodStarts}). A move the table does not list leaves the state as
 * it is: e.g. a sync that ends after `terminateAbnormally` does not turn a
 * `failed` pod into a `finished` one.
 */
import type { V1PodCondition } from '@kubernetes/client-node';

/** The named states; see the sketch in this file's header. */
export type PodState =
  | { readonly name: 'admitted' }
  | { readonly name: 'running' }
  | { readonly name: 'finished'; readonly volumesUnmounted: boolean }
  | { readonly name: 'rejected' }
  | { readonly name: 'failed' }
  | { readonly name: 'torn-down' }
  | { readonly name: 'deleted' };

/** What happened to a pod; {@link advance} maps it to the next state. */
export type PodEvent =
  /** Its first sync began. */
  | 'first-sync'
  /** Its containers all stopped for good (the driver says it finished). */
  | 'containers-stopped'
  /** A finished pod's volumes were torn down. */
  | 'volumes-unmounted'
  /** It was stopped for good by the node (node shutdown, eviction). */
  | 'terminated-abnormally'
  /** Its deletion stopped its containers and removed its volumes, dir and pod IPs. */
  | 'torn-down'
  /** Its object was deleted from the API server (or from memory in standalone mode). */
  | 'object-deleted';

const FINISHED_MOUNTED: PodState = { name: 'finished', volumesUnmounted: false };
const FINISHED_UNMOUNTED: PodState = { name: 'finished', volumesUnmounted: true };
const RUNNING: PodState = { name: 'running' };
const FAILED: PodState = { name: 'failed' };
const TORN_DOWN: PodState = { name: 'torn-down' };
const DELETED: PodState = { name: 'deleted' };

/** The first state of an admitted pod, of one admission refused, and of one that had finished before it was seen. */
export const INITIAL = {
  admitted: { name: 'admitted' } as PodState,
  rejected: { name: 'rejected' } as PodState,
  finished: FINISHED_MOUNTED,
} as const;

/** The state after `event`, or `state` itself when the event does not move it. */
export function advance(state: PodState, event: PodEvent): PodState {
  if (event === 'torn-down') return state.name === 'deleted' ? state : TORN_DOWN;
  if (event === 'object-deleted') return state.name === 'torn-down' ? DELETED : state;
  switch (state.name) {
    case 'admitted':
    case 'running':
      if (event === 'first-sync') return RUNNING;
      if (event === 'containers-stopped') return FINISHED_MOUNTED;
      if (event === 'terminated-abnormally') return FAILED;
      return state;
    case 'finished':
      if (event === 'volumes-unmounted') return FINISHED_UNMOUNTED;
      if (event === 'terminated-abnormally') return FAILED;
      return state;
    case 'rejected':
    case 'failed':
    case 'torn-down':
    case 'deleted':
      return state;
  }
}

/** True in the states whose containers may run (admission counts these pods). */
export function isActive(state: PodState): boolean {
  return state.name === 'admitted' || state.name === 'running';
}

/** How {@link PodController.terminateAbnormally} ends a pod (upstream `TerminatePodOptions`). */
export interface AbnormalTermination {
  /** The grace period for its containers (already capped by the caller). */
  graceMs: number;
  reason: string;
  message: string;
  /** Pod conditions to set, e.g. `DisruptionTarget`. */
  conditions?: Pick<V1PodCondition, 'type' | 'status' | 'reason' | 'message'>[];
}

/**
 * The pods of this node (upstream's pod manager): the pods the sources want
 * here, keyed `namespace/name`, and each admitted pod's entry — its
 * {@link PodState}, its worker and its status bookkeeping. The pod controller
 * is the only writer; subsystems built before it (device plugins, DRA) are
 * handed the store to read which pods are active, so the composition root can
 * build them in dependency order.
 */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { isActive, type AbnormalTermination, type PodState } from './pod-state.ts';
import type { PodWorker } from './pod-worker.ts';
import type { StatusCoalescer } from './status-coalescer.ts';

/** One pod the controller has seen (admitted, refused or found finished). */
export interface PodEntry {
  readonly uid: string;
  /** Moved only by `advance` (pod-state.ts). */
  state: PodState;
  /** Runs the pod; absent for a pod refused at admission or found finished. */
  readonly worker?: PodWorker;
  /** Set by `terminateAbnormally`: laid over every later status post. */
  overlay?: AbnormalTermination;
  /** The JSON of the last status posted (an equal one is not posted again). */
  posted?: string;
  /** The kubelet-owned conditions of the last status posted (`kubeletConditions`, pod-changes.ts), to notice another writer changed them. */
  postedConditions?: string;
  /** The pod's status posts: one in flight, the newest waiting (upstream's status manager coalesces the same way). */
  poster?: StatusCoalescer<{ pod: V1Pod; status: V1PodStatus }>;
  /** When the pod was first seen (performance.now()), until its start was observed (kubelet_pod_start_duration_seconds). */
  seenAt?: number;
  /** The pod a sync is running for now (its interim status may be posted meanwhile). */
  syncing?: V1Pod;
  /** Until when (`Date.now()`) its first sync's interim status may wait for a burst of first syncs to end. */
  interimBy?: number;
}

/** What the store serves to readers: the pods here, the active ones, one pod and its worker. */
export interface PodReader {
  /** All pods the sources want on this node. */
  pods(): V1Pod[];
  /** Pods admitted and not finished (admission, device and DRA garbage collection, eviction, the kubelet API). */
  activePods(): V1Pod[];
  /** The pod and its worker for a key (the kubelet API's log lookups). */
  lookup(key: string): { pod: V1Pod; worker?: PodWorker } | undefined;
}

/** The desired pods and their entries. */
export class PodStore implements PodReader {
  /** What the sources want here, by `namespace/name`. */
  readonly desired = new Map<string, V1Pod>();
  /** The pods the controller has seen, by `namespace/name`. */
  readonly entries = new Map<string, PodEntry>();

  pods(): V1Pod[] {
    return [...this.desired.values()];
  }

  activePods(): V1Pod[] {
    const out: V1Pod[] = [];
    for (const [k, e] of this.entries) {
      const pod = this.desired.get(k);
      if (pod && e.worker && isActive(e.state) && !e.worker.finished(pod)) out.push(pod);
    }
    return out;
  }

  lookup(key: string): { pod: V1Pod; worker?: PodWorker } | undefined {
    const pod = this.desired.get(key);
    return pod ? { pod, worker: this.entries.get(key)?.worker } : undefined;
  }
}

/**
 * The allocation manager (upstream `pkg/kubelet/allocation/allocation_manager.go`): what each
 * pod's containers are allocated, checkpointed (allocation-state.ts), and the decision on each
 * resize — the pod controller and the container drivers see it through `PodAllocation` and
 * `ResizeActuation` (core/pods/pod-allocation.ts).
 *
 *   admitted(pod) ──► allocated = pod's (checkpointed) resources
 *   updated(prev, pod): container resources changed?
 *     desired == allocated ──► PodResizePending cleared (a resize undone)
 *     else ──► pending ──► retryPending('pod_updated') (also: every 3 min, 30 s while the sources
 *              are not ready; when a pod is removed or finished; after a restart)
 *   handlePodResourcesResize(pod), for each pending pod (decreases first, then by priority,
 *   QoS, time pending):
 *     admit handlers [resize (Infeasible), node shutdown, eviction, resources] with the other
 *     pods at their allocated resources
 *       admit ──► allocated = desired (checkpoint), PodResizePending cleared, PodResizeInProgress
 *                 set afresh, ResizeStarted; the pod is synced (container-resize.ts actuates)
 *       reject ──► PodResizePending Infeasible (stays until the spec changes) or Deferred
 *                 (message: the handler's; kept pending, tried again) + ResizeInfeasible/Deferred
 *
 * The actuated resources (what each container's run has) are checkpointed too
 * (`actuated_pods_state`): a container kept across a nodelet restart (the external WASI
 * runtime) is compared with what it really has.
 */
import type { V1Pod, V1PodStatus, V1ResourceRequirements } from '@kubernetes/client-node';
import type { AnyProvider, Logger } from '@nodelet/plugin-api/v1';
import {
  admitContext,
  isResizable,
  podQosClass,
  runAdmitHandlers,
  type AdmitNode,
  type PodAdmitHandler,
  type PodAllocation,
  type PodReader,
  type PodStatusContributor,
  type ResizeActuation,
} from '../pods/index.ts';
import type { Events } from '../events/index.ts';
import { ACTUATED_STATE_FILE, ALLOCATED_STATE_FILE, AllocationState } from './allocation-state.ts';
import { allocationFromPod, containersOf, goRequirements, podFromAllocation, podRequests, sameResources } from './resources.ts';
import { INFEASIBLE, PENDING, ResizeConditions } from './resize-conditions.ts';
import { RESIZE_EVENTS, resizeCompletedMessage, resizeErrorMessage, resizePendingMessage, resizeStartedMessage } from './resize-events.ts';
import { resizeAdmitHandler } from './resize-admit.ts';
import { resizeStatus } from './resize-status.ts';

/** Upstream's retry periods of pending resizes: 30 s at first (and while the sources are not ready), then every 3 min. */
export const INITIAL_RETRY_MS = 30_000;
export const RETRY_MS = 180_000;

/** Why pending resizes are tried again (upstream's trigger reasons). */
export type RetryTrigger = 'pod_resized' | 'pod_updated' | 'pods_added' | 'pods_removed' | 'pod_terminated' | 'periodic_retry';

/** Dependencies of the allocation manager. */
export interface AllocationManagerOptions {
  /** Where the checkpoints are written (the root dir); undefined keeps them in memory. */
  readonly dir: string | undefined;
  readonly log: Logger;
  readonly events: Events;
  /** The node's pods (the pod store). */
  readonly pods: PodReader;
  /** The node facts admission checks a resize against. */
  readonly admitNode: AdmitNode;
  /** The provider a pod runs on (undefined: not known yet). */
  providerOf(pod: V1Pod): AnyProvider | undefined;
  /** True once the pod sources listed every pod (before that, pending resizes wait). */
  sourcesReady(): boolean;
  /** Tests shorten the retry periods. */
  readonly retryMs?: { initial: number; period: number };
}

/** The allocation manager (see the file's comment). */
export class AllocationManager implements PodAllocation, ResizeActuation {
  readonly actuation: ResizeActuation = this;
  /** The resize conditions of each pod (upstream's status manager part). */
  readonly conditions = new ResizeConditions();
  /** `PodResizePending`, `PodResizeInProgress`, `containerStatuses[].resources` and `allocatedResources` in the posted status. */
  readonly statusContributor: PodStatusContributor;
  private readonly allocated: AllocationState;
  private readonly actuatedState: AllocationState;
  private readonly handlers: PodAdmitHandler[];
  private pending: string[] = [];
  private mutex: Promise<unknown> = Promise.resolve();
  private readonly resyncs: Array<(uids: string[]) => void> = [];
  private timer?: NodeJS.Timeout;
  private stopped = true;

  constructor(private readonly o: AllocationManagerOptions) {
    this.allocated = AllocationState.open(o.dir, ALLOCATED_STATE_FILE, o.log);
    this.actuatedState = AllocationState.open(o.dir, ACTUATED_STATE_FILE, o.log);
    this.handlers = [resizeAdmitHandler({ providerOf: (p) => o.providerOf(p), allocatedPod: (p) => this.allocatedPod(p) })];
    this.statusContributor = {
      name: 'resize',
      contribute: (pod, status) => this.contribute(pod, status),
    };
  }

  /** Appends the admit handlers a resize must pass after the resize handler (upstream `AddPodAdmitHandlers`). */
  addAdmitHandlers(handlers: readonly PodAdmitHandler[]): void {
    this.handlers.push(...handlers);
  }

  /** Subscribes `fn` to the pods whose status or allocation changed outside a sync (the root passes the pod controller's `resyncPods`). */
  onResync(fn: (uids: string[]) => void): void {
    this.resyncs.push(fn);
  }

  /** Starts the periodic retry of pending resizes. */
  start(): void {
    this.stopped = false;
    this.schedule(this.o.retryMs?.initial ?? INITIAL_RETRY_MS);
  }

  /** Stops it; resolves once the checkpoints are written. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await Promise.all([this.allocated.flush(), this.actuatedState.flush()]);
  }

  /** Forgets the allocations of pods not in `keep` (upstream `RemoveOrphanedPods`, at start once the sources listed the pods). */
  removeOrphans(keep: ReadonlySet<string>): void {
    this.allocated.removeOrphans(keep);
    this.actuatedState.removeOrphans(keep);
  }

  // ---- PodAllocation ----

  allocatedPod(pod: V1Pod): V1Pod {
    return podFromAllocation(pod, this.allocated.get(pod.metadata?.uid ?? '')).pod;
  }

  serially<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.mutex.then(fn);
    this.mutex = run.catch(() => undefined);
    return run;
  }

  admitted(pod: V1Pod): void {
    const uid = pod.metadata!.uid!;
    // Upstream AddPod: the checkpointed allocation is the truth after a restart; a new pod is allocated what it asks.
    this.allocated.set(uid, allocationFromPod(this.allocatedPod(pod)));
    this.conditions.backfill(uid, pod.status?.conditions);
    if (podFromAllocation(pod, this.allocated.get(uid)).updated) {
      // A resize asked while nodelet was away: decided like any other (once the sources are ready).
      this.push(uid);
      setImmediate(() => void this.serially(() => this.retryPending('pods_added')));
    }
  }

  updated(prev: V1Pod, pod: V1Pod): void {
    if (!resourcesChanged(prev, pod)) return;
    const uid = pod.metadata!.uid!;
    void this.serially(async () => {
      if (!this.allocated.get(uid)) return; // not admitted yet: admission allocates what it asks
      if (podFromAllocation(pod, this.allocated.get(uid)).updated) {
        this.push(uid);
        await this.retryPending('pod_updated');
      } else {
        // A pending resize undone: nothing to do any more.
        this.conditions.clearPending(uid);
        this.resync([uid]);
      }
    });
  }

  removed(uid: string): void {
    this.allocated.remove(uid);
    this.actuatedState.remove(uid);
    this.conditions.forget(uid);
    this.pending = this.pending.filter((u) => u !== uid);
    this.retrySoon('pods_removed');
  }

  finished(uid: string): void {
    // Upstream clears a terminal pod's resize conditions.
    this.conditions.clearPending(uid);
    this.conditions.clearInProgress(uid);
    this.pending = this.pending.filter((u) => u !== uid);
    this.retrySoon('pod_terminated');
  }

  // ---- ResizeActuation ----

  actuated(podUid: string, name: string): V1ResourceRequirements | undefined {
    return this.actuatedState.container(podUid, name);
  }

  setActuated(podUid: string, name: string, resources: V1ResourceRequirements): void {
    this.actuatedState.setContainer(podUid, name, goRequirements(resources));
  }

  inProgress(pod: V1Pod): void {
    this.conditions.setInProgress(pod.metadata!.uid!, '', '', pod.metadata?.generation ?? 0);
  }

  completed(pod: V1Pod): void {
    const generation = this.conditions.clearInProgress(pod.metadata!.uid!);
    if (generation !== undefined) this.event(pod, 'Normal', RESIZE_EVENTS.completed, resizeCompletedMessage(pod, generation));
  }

  failed(pod: V1Pod, message: string): void {
    const { generation, changed } = this.conditions.setInProgress(pod.metadata!.uid!, 'Error', message, pod.metadata?.generation ?? 0);
    if (changed) {
      this.o.log.warn({ pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`, err: message }, 'resizing the pod failed');
      this.event(pod, 'Warning', RESIZE_EVENTS.error, resizeErrorMessage(pod, generation, message));
    }
  }

  // ---- deciding ----

  /** Queues pod `uid`'s resize (upstream `PushPendingResize`). */
  private push(uid: string): void {
    if (!this.pending.includes(uid)) this.pending.push(uid);
  }

  private retrySoon(trigger: RetryTrigger): void {
    if (this.pending.length === 0) return;
    void this.serially(() => this.retryPending(trigger));
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.serially(() => this.retryPending('periodic_retry')), ms);
    this.timer.unref();
  }

  private podByUid(uid: string): V1Pod | undefined {
    return this.o.pods.pods().find((p) => p.metadata?.uid === uid);
  }

  /** Upstream `retryPendingResizes` (called under {@link AllocationManager.serially}). */
  private async retryPending(trigger: RetryTrigger): Promise<void> {
    if (!this.o.sourcesReady()) {
      this.schedule(this.o.retryMs?.initial ?? INITIAL_RETRY_MS);
      return;
    }
    this.schedule(this.o.retryMs?.period ?? RETRY_MS);
    const still: string[] = [];
    for (const uid of this.sortedPending()) {
      const pod = this.podByUid(uid);
      if (!pod) continue;
      const before = JSON.stringify(this.conditions.list(uid));
      let allocated = false;
      try {
        allocated = await this.handlePodResourcesResize(pod);
      } catch (e) {
        this.o.log.error({ pod: uid, err: String(e) }, 'failed to handle a pod resize');
        still.push(uid);
        continue;
      }
      if (this.conditions.isDeferred(uid)) still.push(uid);
      else if (allocated) this.o.log.info({ pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`, trigger }, 'pod resize allocated');
      if (allocated || JSON.stringify(this.conditions.list(uid)) !== before) this.resync([uid]);
    }
    // Nothing queues a resize meanwhile: every change of `pending` happens under the same mutex.
    this.pending = still;
  }

  /** Upstream `handlePodResourcesResize`: true when the resize was allocated now. */
  private async handlePodResourcesResize(pod: V1Pod): Promise<boolean> {
    const uid = pod.metadata!.uid!;
    const generation = pod.metadata?.generation ?? 0;
    if (!podFromAllocation(pod, this.allocated.get(uid)).updated) {
      this.conditions.clearPending(uid);
      return false;
    }
    const others = this.otherPods(uid);
    const verdict = await runAdmitHandlers(this.handlers, pod, () => admitContext(this.o.admitNode, others));
    if (verdict.admit) {
      this.allocated.set(uid, allocationFromPod(pod));
      this.conditions.clearPending(uid);
      this.conditions.clearInProgress(uid);
      this.conditions.setInProgress(uid, '', '', generation);
      this.event(pod, 'Normal', RESIZE_EVENTS.started, resizeStartedMessage(pod, generation));
      return true;
    }
    if (verdict.reason !== '' && this.conditions.setPending(uid, verdict.reason, verdict.message, generation)) {
      const infeasible = verdict.reason === INFEASIBLE;
      const reason = infeasible ? INFEASIBLE : 'Deferred';
      this.event(
        pod,
        'Warning',
        infeasible ? RESIZE_EVENTS.infeasible : RESIZE_EVENTS.deferred,
        resizePendingMessage(pod, reason, verdict.message, generation),
      );
    }
    return false;
  }

  /**
   * The pods a resize is checked against, at their allocated resources: the active ones, and
   * those with an allocation that are not admitted yet again (right after a restart, before
   * their first sync) — all but `uid`.
   */
  private otherPods(uid: string): V1Pod[] {
    const seen = new Set<string>();
    const out: V1Pod[] = [];
    const add = (p: V1Pod) => {
      const u = p.metadata?.uid ?? '';
      if (u === uid || seen.has(u)) return;
      seen.add(u);
      out.push(this.allocatedPod(p));
    };
    for (const p of this.o.pods.activePods()) add(p);
    for (const p of this.o.pods.pods()) {
      const phase = p.status?.phase;
      if (phase !== 'Succeeded' && phase !== 'Failed' && this.allocated.get(p.metadata?.uid ?? '')) add(p);
    }
    return out;
  }

  /** Upstream `sortPendingResizes`: resizes that do not increase requests first, then by priority, QoS (Guaranteed first) and time pending. */
  private sortedPending(): string[] {
    const pods = this.pending.map((uid) => this.podByUid(uid)).filter((p): p is V1Pod => p !== undefined);
    const increasing = (p: V1Pod) => {
      const was = podRequests(this.allocatedPod(p));
      const now = podRequests(p);
      return now.memory > was.memory || now.cpu > was.cpu;
    };
    const since = (p: V1Pod) =>
      this.conditions
        .list(p.metadata!.uid!)
        .find((c) => c.type === PENDING)
        ?.lastTransitionTime.getTime();
    const key = (p: V1Pod) => ({ inc: increasing(p), prio: p.spec?.priority ?? 0, guaranteed: podQosClass(p) === 'Guaranteed', since: since(p) });
    return pods
      .map((p) => ({ p, k: key(p) }))
      .sort((a, b) => {
        if (a.k.inc !== b.k.inc) return a.k.inc ? 1 : -1;
        if (a.k.prio !== b.k.prio) return b.k.prio - a.k.prio;
        if (a.k.guaranteed !== b.k.guaranteed) return a.k.guaranteed ? -1 : 1;
        if (a.k.since === undefined) return b.k.since === undefined ? 0 : 1;
        if (b.k.since === undefined) return -1;
        return a.k.since - b.k.since;
      })
      .map(({ p }) => p.metadata!.uid!);
  }

  private resync(uids: string[]): void {
    for (const fn of this.resyncs) fn(uids);
  }

  private event(pod: V1Pod, type: 'Normal' | 'Warning', reason: string, note: string): void {
    const m = pod.metadata!;
    this.o.events.emit({ kind: 'Pod', namespace: m.namespace!, name: m.name!, uid: m.uid! }, type, reason, note);
  }

  // ---- status ----

  private contribute(pod: V1Pod, status: V1PodStatus): V1PodStatus {
    const uid = pod.metadata?.uid ?? '';
    const provider = this.o.providerOf(pod);
    return resizeStatus({
      pod,
      status,
      allocated: this.allocatedPod(pod),
      conditions: this.conditions.list(uid),
      reportResources: provider !== undefined && typeof provider.pods !== 'object',
      actuated: (name) => this.actuatedState.container(uid, name),
    });
  }
}

/** Upstream `recordResizeOperations`: did a resizable container's cpu or memory request or limit change? */
export function resourcesChanged(prev: V1Pod, pod: V1Pod): boolean {
  const before = containersOf(prev);
  for (const { c, init } of containersOf(pod)) {
    const old = before.find((x) => x.c.name === c.name && x.init === init)?.c;
    if (!old) continue;
    if (!isResizable(c, init)) continue;
    if (!sameResources(pick(old.resources), pick(c.resources))) return true;
  }
  return false;
}

/** Only cpu and memory: other resources cannot be resized. */
function pick(r: V1ResourceRequirements | undefined): V1ResourceRequirements {
  const only = (m: Record<string, string> | undefined) => Object.fromEntries(Object.entries(m ?? {}).filter(([k]) => k === 'cpu' || k === 'memory'));
  return { limits: only(r?.limits), requests: only(r?.requests) };
}

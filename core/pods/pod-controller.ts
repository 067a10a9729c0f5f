/**
 * The pod controller: a queue of `namespace/name` keys and one `sync` that
 * converges what runs here to what the pod source wants (virtual-kubelet's
 * shape). Sources (the API informer or static manifests) only call
 * `upsert`/`remove`; container exits and back-offs re-queue keys. Each pod's
 * state is one {@link PodState} value (pod-state.ts draws the machine); `sync`
 * reads it to choose a path and moves it with `advance`:
 *
 *   sync(key):  gone, or another uid? ──► forget(): terminate(0), tear down, release pod IPs (unless torn-down)
 *               deletionTimestamp?    ──► deleting(): terminate(grace), post, tear down, release IPs ─► torn-down
 *                                         ──► delete the object ─► deleted
 *               unseen?               ──► admit(): admitted | rejected (status Failed(reason)) | finished (found so)
 *               admitted / running    ──► syncActive(): worker.reconcile, post status (+ contributors)
 *                                         └ containers stopped for good ─► finished: release pod resources (DRA)
 *               finished              ──► syncFinished(): post, release pod IPs, unmount volumes (once; retried)
 *               rejected / failed / torn-down / deleted ──► nothing
 *   terminateAbnormally (node shutdown, eviction): cancel, terminate(grace), release pod resources,
 *               post Failed(reason) ─► failed (never synced again; a later deletion still cleans it up)
 *
 * The pod path has three layers: this controller (one state value per pod),
 * the pod worker (`pod-worker.ts`: context, network, volumes, termination) and
 * its driver for the provider's kind (`pod-driver.ts`).
 */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { isPodProvider, type AnyProvider, type Logger, type PodContext } from '@nodelet/plugin-api/v1';
import { admitContext, runAdmitHandlers, type AdmitNode, type AdmitResult, type PodAdmitHandler } from './admit-handler.ts';
import { Backoff, crashLoopBackoff } from '../backoff/index.ts';
import type { PodSetup } from './pod-setup.ts';
import type { PodStatusContributor } from './pod-status-contributor.ts';
import type { PodNetwork } from './pod-network.ts';
import { PodWorker } from './pod-worker.ts';
import { PodStore, type PodEntry, type PodReader } from './pod-store.ts';
import { advance, INITIAL, type AbnormalTermination, type PodEvent } from './pod-state.ts';
import { WorkQueue } from './work-queue.ts';
import type { PodStarts } from './pod-starts.ts';
import { kubeletConditions, needsSync } from './pod-changes.ts';
import { mergePodConditions } from './pod-status.ts';
import type { Events } from '../events/index.ts';
import { podStartDuration, podWorkerDuration } from '../metrics/index.ts';
import type { ProbeManager } from '../probes/index.ts';
import { StatusCoalescer } from './status-coalescer.ts';
import { podQosClass } from './container-limits.ts';
import type { PodAllocation } from './pod-allocation.ts';

/** Where pod status goes: the API server, or memory in standalone mode. */
export interface StatusSink {
  patchStatus(pod: V1Pod, status: V1PodStatus): Promise<void>;
  /** Deletes the pod object with grace period 0 once its containers are gone. */
  deletePod(pod: V1Pod): Promise<void>;
}

/**
 * Picks the provider for a pod (one that runs containers, or a `PodProvider`
 * that owns whole pods), says why none fits, or asks to try again later (the
 * RuntimeClass cache has not synced: the pod is not admitted yet).
 */
export type ProviderRouter = (pod: V1Pod) => { provider: AnyProvider } | { reason: string; message: string } | { retryAfterMs: number; message: string };

/** Dependencies of the pod controller. */
export interface PodControllerOptions {
  nodeName: string;
  hostIP: string;
  log: Logger;
  route: ProviderRouter;
  setup: PodSetup;
  sink: StatusSink;
  events: Events;
  /** Pod IPs (none: pods get no IP); released when a pod is deleted, forgotten or finished. */
  network?: PodNetwork;
  /** The node admission checks against (its allocatable from explicit contributors). */
  admitNode: AdmitNode;
  /** Run in order for each new pod; the first rejection fails the pod with its reason ({@link PodController.addAdmitHandlers} appends). */
  admitHandlers?: readonly PodAdmitHandler[];
  /** Where the desired pods and their states are kept (default: a store of its own); subsystems built earlier read it. */
  store?: PodStore;
  resyncMs: number;
  /** Pods synced at once; default: no limit (upstream runs one goroutine per pod). */
  concurrency?: number;
  /** Restart and image-pull back-off (default 10 s doubling to 300 s); tests shorten it. */
  backoff?: { initialMs: number; maxMs: number };
  /**
   * The cap of the container restart back-off (`crashLoopBackOff.maxContainerRestartPeriod`,
   * KubeletCrashLoopBackOffMax); the first delay is lowered to it when it is shorter. Image pulls
   * keep their own back-off. Default: `backoff.maxMs`, else 300 s.
   */
  restartBackoffMaxMs?: number;
  /** The node's prober: probes and lifecycle hooks of container runs (absent: not run). */
  probes?: ProbeManager;
  /** Applied in order to every status before it is compared and posted (device plugins, DRA: allocatedResourcesStatus). */
  statusContributors?: readonly PodStatusContributor[];
  /** Counts the pods in their first sync (the event recorder and interim statuses yield to them). */
  starts?: PodStarts;
  /** How long after a first sync began its interim status may wait for a burst to end (default {@link INTERIM_YIELD_MS}); tests shorten it. */
  interimYieldMs?: number;
  /** How often posted statuses are compared with the server's copies (default {@link STATUS_RECONCILE_MS}); tests shorten it. */
  statusReconcileMs?: number;
  /**
   * In-place pod resize (pod-allocation.ts): pods run with their allocated resources, a change of
   * container resources is a resize request; without it pods run with their spec's resources.
   */
  allocation?: PodAllocation;
}

export type { AbnormalTermination };

const keyOf = (p: V1Pod) => `${p.metadata!.namespace}/${p.metadata!.name}`;

/**
 * How often the kubelet-owned conditions nodelet posted are compared with the server's copy of
 * each pod (the informer's), as upstream's status manager does in its 10 s `syncBatch`
 * (`needsReconcile`). Another writer may have changed them: the node-lifecycle controller sets
 * Ready=False on every pod of a node it marked Unknown (e.g. while the apiserver throttled or
 * could not be reached), and nodelet's own view did not change, so nothing else posts again.
 */
const STATUS_RECONCILE_MS = 10_000;

/** A sync that takes longer than this posts an interim status (e.g. Pending/ContainerCreating during a slow pull). */
const INTERIM_STATUS_MS = 1000;
/**
 * Interim statuses posted at once, at most. The others wait their turn in a keyed queue,
 * and one whose sync ended meanwhile is not posted: that sync posts the newer status.
 * In a burst of 100 pods the first syncs all outlast the second (they wait on token
 * requests), and an interim PATCH per pod was a third of the API writes before Running;
 * a slow pull on a quiet node still shows ContainerCreating after a second
 * (bench/README.md).
 */
const INTERIM_POSTS_AT_ONCE = 4;
/**
 * How long after its first sync began a pod's interim status may wait while a burst of
 * first syncs (2 or more, {@link PodStarts}) runs, as events do: in a 100-pod burst the
 * interim PATCHes competed with the token requests and Running PATCHes the pods wait for
 * (bench/README.md). A pod starting
 * alone still shows ContainerCreating after {@link INTERIM_STATUS_MS}.
 */
const INTERIM_YIELD_MS = 10_000;

/** Runs the pods bound to this node. */
export class PodController implements PodReader {
  private readonly store: PodStore;
  private readonly desired: Map<string, V1Pod>;
  private readonly entries: Map<string, PodEntry>;
  private readonly admitHandlers: PodAdmitHandler[];
  private readonly queue: WorkQueue;
  /** Pods whose interim status waits to be posted (see {@link INTERIM_POSTS_AT_ONCE}). */
  private readonly interim: WorkQueue;
  private readonly restartBackoff: Backoff;
  private readonly pullBackoff: Backoff;
  /** Volume set-up retries, like upstream's volume operations: 500 ms doubling to 2m2s. */
  private readonly volumeBackoff: Backoff;
  /**
   * Status post retries, per pod: 1 s doubling to 10 s, the period at which upstream's status
   * manager posts every status not yet posted. The API client has already waited out any
   * `Retry-After` (and holds its requests while the apiserver throttles), so a pod whose posts
   * keep failing (apiserver down, 5xx) costs one try per 10 s, and its newest status is posted
   * once the apiserver takes it.
   */
  private readonly statusBackoff = new Backoff(1000, 10_000);
  private resync?: NodeJS.Timeout;
  private statusReconcile?: NodeJS.Timeout;
  private admitting: Promise<void> = Promise.resolve();
  private stopping = false;
  /** Aborted by {@link PodController.shutdown}. */
  private readonly stopped = new AbortController();

  constructor(private readonly o: PodControllerOptions) {
    this.store = o.store ?? new PodStore();
    this.desired = this.store.desired;
    this.entries = this.store.entries;
    this.admitHandlers = [...(o.admitHandlers ?? [])];
    // Tests' shortened back-off keeps its reset after 2 × max idle.
    this.restartBackoff = crashLoopBackoff({
      maxMs: o.restartBackoffMaxMs ?? o.backoff?.maxMs,
      initialMs: o.backoff?.initialMs,
      resetAfterMs: o.backoff && 2 * o.backoff.maxMs,
    });
    this.pullBackoff = new Backoff(o.backoff?.initialMs, o.backoff?.maxMs);
    this.volumeBackoff = new Backoff(500, 122_000);
    // No limit by default: a pod waiting for a slot behind others' token requests and mounts was most
    // of a burst's start latency with a limit of 32 (bench/README.md).
    this.queue = new WorkQueue((k) => this.timedSync(k), o.concurrency ?? Infinity);
    this.interim = new WorkQueue((k) => this.postInterim(k), INTERIM_POSTS_AT_ONCE);
  }

  /**
   * Appends admit handlers, run in order after those given at construction (upstream's
   * `AddPodAdmitHandlers`): subsystems that stop pods through this controller (node
   * shutdown, eviction) are built after it and add theirs before the first pod arrives.
   */
  addAdmitHandlers(handlers: readonly PodAdmitHandler[]): void {
    this.admitHandlers.push(...handlers);
  }

  /** Starts periodic resyncs. */
  start(): void {
    this.resync = setInterval(() => {
      for (const k of this.desired.keys()) this.queue.add(k);
    }, this.o.resyncMs);
    this.resync.unref();
    this.statusReconcile = setInterval(() => this.reconcileStatuses(), this.o.statusReconcileMs ?? STATUS_RECONCILE_MS);
    this.statusReconcile.unref();
  }

  /**
   * Syncs again the pods whose server copy shows other kubelet-owned conditions than nodelet
   * last posted (see {@link STATUS_RECONCILE_MS}); the sync's status, merged with the server's
   * copy, differs from the one posted and is posted. A pod with a post in flight is left to it;
   * only pods whose sync posts a status (admitted, running, finished) are looked at.
   */
  private reconcileStatuses(): void {
    for (const [key, entry] of this.entries) {
      const pod = this.desired.get(key);
      if (!pod || pod.metadata?.uid !== entry.uid || !entry.worker || entry.postedConditions === undefined || entry.poster?.busy) continue;
      if (!['admitted', 'running', 'finished'].includes(entry.state.name) || pod.metadata.deletionTimestamp) continue;
      if (kubeletConditions(pod.status?.conditions) === entry.postedConditions) continue;
      this.o.log.info({ pod: key }, "the pod's conditions on the API server differ from those posted, posting its status again");
      this.queue.add(key);
    }
  }

  /** A pod was added or changed. */
  upsert(pod: V1Pod): void {
    if (this.stopping) return;
    const key = keyOf(pod);
    const prev = this.desired.get(key);
    this.desired.set(key, pod);
    if (prev && prev.metadata?.uid === pod.metadata?.uid) this.o.allocation?.updated(prev, pod);
    // A deletion aborts the pod's in-flight pulls and starts now, not after the sync running them.
    if (pod.metadata?.deletionTimestamp) this.cancel(key, pod.metadata.uid);
    if (!prev || needsSync(prev, pod)) this.queue.add(key);
  }

  /** Syncs the pods with these uids again now (an object they refer to changed). */
  resyncPods(uids: readonly string[]): void {
    if (this.stopping || uids.length === 0) return;
    const want = new Set(uids);
    for (const [k, p] of this.desired) if (want.has(p.metadata?.uid ?? '')) this.queue.add(k);
  }

  /** A pod is gone from the source. */
  remove(key: string): void {
    const uid = this.desired.get(key)?.metadata?.uid;
    this.desired.delete(key);
    if (uid) this.o.allocation?.removed(uid);
    this.cancel(key);
    this.queue.add(key);
  }

  private cancel(key: string, uid?: string): void {
    const entry = this.entries.get(key);
    if (entry?.worker && (uid === undefined || entry.uid === uid)) entry.worker.cancel();
  }

  /** Moves the entry's state by `event`; true when the state changed. */
  private move(entry: PodEntry, event: PodEvent): boolean {
    const next = advance(entry.state, event);
    if (next === entry.state) return false;
    entry.state = next;
    return true;
  }

  /** Pods currently admitted and not finished (for admission and the kubelet API). */
  activePods(): V1Pod[] {
    return this.store.activePods();
  }

  /** The pod and its worker for a key (the kubelet API's log lookups). */
  lookup(key: string): { pod: V1Pod; worker?: PodWorker } | undefined {
    return this.store.lookup(key);
  }

  /** All pods this node knows about. */
  pods(): V1Pod[] {
    return this.store.pods();
  }

  /** One sync, observed as kubelet_pod_worker_duration_seconds (operation_type create for a pod's first sync). */
  private async timedSync(key: string): Promise<void> {
    const end = podWorkerDuration.startTimer({ operation_type: this.entries.has(key) ? 'sync' : 'create' });
    try {
      await this.sync(key);
    } catch (e) {
      this.o.log.error({ pod: key, err: String(e) }, 'pod sync failed');
    } finally {
      end();
    }
  }

  /** The one sync: picks the path for the pod's state (see the header). */
  private async sync(key: string): Promise<void> {
    const pod = this.desired.get(key);
    let entry = this.entries.get(key);
    if (entry && (!pod || pod.metadata!.uid !== entry.uid)) {
      await this.forget(key, entry, pod);
      entry = undefined;
    }
    if (!pod) return;
    if (pod.metadata!.deletionTimestamp) return this.deleting(key, pod, entry);
    entry ??= await this.admitSerially(key, pod);
    if (!entry) return;
    switch (entry.state.name) {
      case 'admitted':
      case 'running':
        return this.syncActive(key, pod, entry, entry.worker!);
      case 'finished':
        return this.syncFinished(key, pod, entry);
      case 'rejected':
      case 'failed':
      case 'torn-down':
      case 'deleted':
        return;
    }
  }

  /** Upstream `SyncPod`: reconciles an active pod and posts its status; its containers stopping for good makes it `finished`. */
  private async syncActive(key: string, pod: V1Pod, entry: PodEntry, worker: PodWorker): Promise<void> {
    // A pod's first sync lasts until its status after it was posted (the events recorder yields meanwhile).
    const firstSyncEnded = this.move(entry, 'first-sync') ? this.o.starts?.begin() : undefined;
    // What runs is what is allocated: a pending resize waits (pod-allocation.ts).
    pod = this.o.allocation?.allocatedPod(pod) ?? pod;
    try {
      if (!worker.finished(pod)) {
        const interim = setTimeout(() => this.interim.add(key), INTERIM_STATUS_MS);
        entry.interimBy = firstSyncEnded ? Date.now() + (this.o.interimYieldMs ?? INTERIM_YIELD_MS) : undefined;
        entry.syncing = pod;
        try {
          await worker.reconcile(pod);
        } finally {
          clearTimeout(interim);
          entry.syncing = undefined;
        }
      }
      // Upstream unprepares a finished pod's claims after its containers stopped and before its terminal status is posted.
      if (worker.finished(pod) && this.move(entry, 'containers-stopped')) {
        await this.o.setup.releaseResources?.(pod);
        this.o.allocation?.finished(entry.uid);
      }
      await this.post(pod, entry, worker.status(pod));
    } finally {
      firstSyncEnded?.();
    }
    if (entry.state.name === 'finished') await this.releaseFinished(key, pod, entry);
  }

  /** Upstream `SyncTerminatedPod`: a finished pod's status stays posted; its pod IPs and volumes are released until that succeeded. */
  private async syncFinished(key: string, pod: V1Pod, entry: PodEntry): Promise<void> {
    if (entry.worker) await this.post(pod, entry, entry.worker.status(pod));
    await this.releaseFinished(key, pod, entry);
  }

  /**
   * Releases what a finished pod holds on the node: its pod IPs (upstream tears the sandbox
   * down once a pod finished; status.podIP stays as posted), then its volumes (upstream
   * `syncTerminatedPod`: CSI NodeUnpublish, NodeUnstage when it was the last user). An
   * unmount failure is logged and retried with the volume back-off.
   */
  private async releaseFinished(key: string, pod: V1Pod, entry: PodEntry): Promise<void> {
    if (entry.state.name !== 'finished' || entry.state.volumesUnmounted) return;
    await this.o.network?.release(pod);
    try {
      await this.o.setup.unmountVolumes(pod);
      this.move(entry, 'volumes-unmounted');
      this.volumeBackoff.reset(`${entry.uid}/unmount`);
    } catch (e) {
      const ms = this.volumeBackoff.next(`${entry.uid}/unmount`);
      this.o.log.warn({ pod: key, err: String(e), retryInMs: ms }, 'unmounting the volumes of a finished pod failed, will retry');
      this.queue.addAfter(key, ms);
    }
  }

  /** Admits one pod at a time, like upstream's HandlePodAdditions, so two pods never share the same free resources. */
  private admitSerially(key: string, pod: V1Pod): Promise<PodEntry | undefined> {
    // With allocation, admissions and resize decisions take turns (upstream's allocation mutex).
    const admit = () => (this.o.allocation ? this.o.allocation.serially(() => this.admit(key, pod)) : this.admit(key, pod));
    const run = this.admitting.then(admit);
    this.admitting = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private async verdict(pod: V1Pod): Promise<{ routed: ReturnType<ProviderRouter>; verdict: AdmitResult }> {
    const routed = this.o.route(pod);
    if ('retryAfterMs' in routed) return { routed, verdict: { admit: false, reason: '', message: routed.message } };
    if (!('provider' in routed)) return { routed, verdict: { admit: false, reason: routed.reason, message: routed.message } };
    // Read once per admission: the pods admitted before this one cannot change during it (one at a time), while
    // the allocatable is read again for each handler (device allocation raises it). A pass over every pod per handler
    // was most of admission's time in a burst.
    let admitted: V1Pod[] | undefined;
    // The pods already admitted count with what is allocated to them, not what their specs ask now.
    const allocated = (p: V1Pod) => this.o.allocation?.allocatedPod(p) ?? p;
    const others = () => (admitted ??= this.activePods().map(allocated));
    return { routed, verdict: await runAdmitHandlers(this.admitHandlers, allocated(pod), () => admitContext(this.o.admitNode, others())) };
  }

  /** Gives a pod seen for the first time its first state; undefined when it cannot be routed yet (retried later). */
  private async admit(key: string, pod: V1Pod): Promise<PodEntry | undefined> {
    const uid = pod.metadata!.uid!;
    const seenAt = performance.now();
    if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') {
      // Finished before nodelet (re)started: nothing runs; what it left mounted is released by syncFinished.
      const entry: PodEntry = { uid, seenAt, state: INITIAL.finished };
      this.entries.set(key, entry);
      await this.o.setup.releaseResources?.(pod);
      return entry;
    }
    const { routed, verdict } = await this.verdict(pod);
    if ('retryAfterMs' in routed) {
      this.o.log.info({ pod: key, retryAfterMs: routed.retryAfterMs }, `cannot route the pod yet: ${routed.message}`);
      this.queue.addAfter(key, routed.retryAfterMs);
      return undefined;
    }
    if (!verdict.admit) {
      const entry: PodEntry = { uid, seenAt, state: INITIAL.rejected };
      this.entries.set(key, entry);
      const message = `Pod was rejected: ${verdict.message}`;
      this.event(pod, 'Warning', verdict.reason, verdict.message);
      void this.post(pod, entry, { phase: 'Failed', reason: verdict.reason, message, conditions: pod.status?.conditions, startTime: new Date() });
      return entry;
    }
    const provider = (routed as { provider: AnyProvider }).provider;
    const worker = new PodWorker(pod, {
      provider,
      setup: this.o.setup,
      hostIP: this.o.hostIP,
      network: this.o.network,
      requeue: (ms: number) => this.queue.addAfter(key, ms),
      context: (p: V1Pod, signal: AbortSignal) => this.context(p, signal),
      event: (type: 'Normal' | 'Warning', reason: string, note: string, fieldPath?: string) => this.event(pod, type, reason, note, fieldPath),
      probes: this.o.probes,
      backoff: { restart: this.restartBackoff, pull: this.pullBackoff, volume: this.volumeBackoff },
      resize: this.o.allocation?.actuation,
    });
    const entry: PodEntry = { uid, seenAt, state: INITIAL.admitted, worker };
    this.entries.set(key, entry);
    this.o.allocation?.admitted(pod);
    return entry;
  }

  private context(pod: V1Pod, signal: AbortSignal): PodContext {
    return {
      log: this.o.log.child({ pod: keyOf(pod) }),
      event: (type, reason, message) => this.event(pod, type, reason, message),
      signal,
      podDir: this.o.setup.podDir(pod),
      qosClass: podQosClass(pod),
    };
  }

  private event(pod: V1Pod, type: 'Normal' | 'Warning', reason: string, note: string, fieldPath?: string): void {
    const m = pod.metadata!;
    this.o.events.emit({ kind: 'Pod', namespace: m.namespace!, name: m.name!, uid: m.uid!, fieldPath }, type, reason, note);
  }

  /** Posts the interim status of a pod whose sync is still running (nothing once it ended). */
  private async postInterim(key: string): Promise<void> {
    const entry = this.entries.get(key);
    if (!entry?.syncing || !entry.worker || this.stopping) return;
    // In a burst of first syncs, an interim status waits for it to end (the syncs then post newer statuses).
    if (entry.interimBy !== undefined) await this.o.starts?.quiet(entry.interimBy, this.stopped.signal);
    const pod = entry.syncing;
    if (!pod || this.stopping) return;
    await this.post(pod, entry, entry.worker.status(pod));
  }

  /**
   * Posts `status` unless it is what was posted last; posts of one pod are applied in order,
   * and statuses offered while a post is in flight are coalesced into the newest.
   */
  private post(pod: V1Pod, entry: PodEntry, status: V1PodStatus): Promise<void> {
    entry.poster ??= new StatusCoalescer((s) => this.postNow(s.pod, entry, s.status));
    return entry.poster.offer({ pod, status });
  }

  private async postNow(pod: V1Pod, entry: PodEntry, given: V1PodStatus): Promise<void> {
    const f = entry.overlay;
    // The status contributors' parts (device plugins' and DRA's allocatedResourcesStatus) before the comparison with what was posted.
    for (const c of this.o.statusContributors ?? []) given = c.contribute(pod, given);
    const status = f
      ? { ...given, phase: 'Failed', reason: f.reason, message: f.message, conditions: mergePodConditions(given.conditions, f.conditions ?? [], new Date()) }
      : given;
    const text = JSON.stringify(status);
    if (text === entry.posted) return;
    try {
      await this.o.sink.patchStatus(pod, status);
      entry.posted = text;
      entry.postedConditions = kubeletConditions(status.conditions);
      this.statusBackoff.reset(entry.uid);
      if (entry.seenAt !== undefined && allRunning(status)) {
        podStartDuration.observe((performance.now() - entry.seenAt) / 1000);
        entry.seenAt = undefined;
      }
      pod.status = { ...pod.status, ...status };
    } catch (e) {
      const retryInMs = this.statusBackoff.next(entry.uid);
      this.o.log.warn({ pod: keyOf(pod), err: String(e), retryInMs }, 'failed to update pod status, will retry');
      this.queue.addAfter(keyOf(pod), retryInMs);
    }
  }

  private graceMs(pod: V1Pod): number {
    const s = pod.metadata?.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
    return Math.max(0, s) * 1000;
  }

  /**
   * A pod with a deletionTimestamp: stops its containers within the grace period, posts its
   * status, tears its volumes and dir down and releases its pod IPs (`torn-down`), then deletes
   * its object (`deleted`); upstream keeps the object until the volumes are gone. A failed step
   * is retried after 2 s from the start (each step is idempotent).
   */
  private async deleting(key: string, pod: V1Pod, entry?: PodEntry): Promise<void> {
    if (entry?.state.name === 'deleted') return;
    if (entry?.worker) {
      await entry.worker.terminate(pod, this.graceMs(pod));
      await this.post(pod, entry, entry.worker.status(pod));
    }
    try {
      await this.o.setup.teardown(pod);
    } catch (e) {
      this.o.log.warn({ pod: key, err: String(e) }, 'volume teardown failed, will retry');
      this.queue.addAfter(key, 2000);
      return;
    }
    await this.o.network?.release(pod);
    if (entry) this.move(entry, 'torn-down');
    try {
      await this.o.sink.deletePod(pod);
      if (entry) this.move(entry, 'object-deleted');
    } catch (e) {
      this.o.log.warn({ pod: key, err: String(e) }, 'failed to delete pod object, will retry');
      this.queue.addAfter(key, 2000);
    }
  }

  /** A pod gone from the source (or replaced by one with another uid): stops it and, unless its deletion did, releases what it held. */
  private async forget(key: string, entry: PodEntry, replacement?: V1Pod): Promise<void> {
    this.entries.delete(key);
    this.o.allocation?.removed(entry.uid);
    this.statusBackoff.reset(entry.uid);
    this.o.events.forget?.(entry.uid);
    const old = entry.worker;
    if (!old) return;
    const pod = { metadata: { uid: entry.uid, name: key.split('/')[1], namespace: key.split('/')[0] }, spec: { containers: [] } } as V1Pod;
    await old.terminate(pod, 0);
    // After a deletion the object goes last (teardown first, as upstream): its DELETED event finds nothing to clean.
    const tornDown = entry.state.name === 'torn-down' || entry.state.name === 'deleted';
    if (!tornDown && (!replacement || replacement.metadata!.uid !== entry.uid)) {
      await this.o.setup.teardown(pod).catch(() => undefined);
      await this.o.network?.release(pod);
    }
  }

  /**
   * Stops an admitted pod for good and fails it, as upstream's
   * `TerminatePodAbnormallyAndWait` (graceful node shutdown and eviction use it): aborts what
   * is in flight, stops its containers through the normal stop path within `graceMs`, then
   * posts phase `Failed` with `reason`, `message` and `conditions` (state `failed`). The pod
   * is no longer synced nor counted as active; a later deletion still cleans it up. Resolves
   * once the status was posted (or its post failed and was queued for retry); never rejects.
   */
  async terminateAbnormally(pod: V1Pod, t: AbnormalTermination): Promise<void> {
    const key = keyOf(pod);
    const entry = this.entries.get(key);
    const worker = entry?.worker;
    if (!entry || !worker || entry.uid !== pod.metadata?.uid) return;
    const wasFinished = entry.state.name === 'finished';
    if (!this.move(entry, 'terminated-abnormally')) return;
    const current = this.desired.get(key) ?? pod;
    entry.overlay = t;
    this.o.log.info({ pod: key, graceMs: t.graceMs, reason: t.reason }, 'terminating pod abnormally');
    worker.cancel();
    await worker.terminate(current, t.graceMs);
    // A finished pod's resources were released when it finished.
    if (!wasFinished) {
      await this.o.setup.releaseResources?.(current);
      this.o.allocation?.finished(entry.uid);
    }
    await this.post(current, entry, worker.status(current));
  }

  /**
   * Stops taking pods and stops every container within its grace period (pod
   * objects stay) — except those of a provider that keeps containers across
   * nodelet restarts (`keepsContainers`): they keep running for the next
   * nodelet process to re-adopt.
   */
  async shutdown(): Promise<void> {
    this.stopping = true;
    this.stopped.abort(); // interim posts waiting for a burst to end give up now
    if (this.resync) clearInterval(this.resync);
    if (this.statusReconcile) clearInterval(this.statusReconcile);
    await Promise.all([this.queue.shutdown(), this.interim.shutdown()]);
    await Promise.all(
      [...this.entries.entries()].map(async ([k, e]) => {
        const pod = this.desired.get(k);
        const p = e.worker?.provider;
        if (p && !isPodProvider(p) && p.keepsContainers) return undefined;
        return e.worker && pod ? e.worker.terminate(pod, this.graceMs(pod)) : undefined;
      }),
    );
  }
}

/** True once every container of the status runs (the pod has started). */
function allRunning(s: V1PodStatus): boolean {
  const cs = s.containerStatuses ?? [];
  return s.phase === 'Running' && cs.length > 0 && cs.every((c) => c.state?.running !== undefined);
}

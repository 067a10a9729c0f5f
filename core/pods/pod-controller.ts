/**
 * The pod controller: a queue of `namespace/name` keys and one `sync` that
 * converges what runs here to what the pod source wants (virtual-kubelet's
 * shape). Sources (the API informer or static manifests) only call
 * `upsert`/`remove`; container exits and back-offs re-queue keys.
 *
 *   sync(key):  gone? ──► terminate(0) ──► forget (teardown, release pod IPs; not again after deleting's)
 *               deleting? ──► terminate(grace) ──► final status ──► teardown, release pod IPs ──► delete object
 *               new? ──► admit ─(rejected)─► status Failed(reason)
 *               └──► worker.reconcile ──► finished? release pod resources (DRA, once)
 *                        ──► status + contributors (DRA health) (patched only if changed)
 *                        ──► finished? release pod IPs, unmount volumes (once; retried on failure)
 *   terminateAbnormally (node shutdown): cancel ──► terminate(grace) ──► release pod resources ──► status Failed(reason)
 *               └──► final: never synced again, not active (its object stays until deleted)
 */
import type { V1Pod, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';
import { isPodProvider, type AnyProvider, type Logger, type PodContext } from '@nodelet/plugin-api/v1';
import { admitContext, runAdmitHandlers, type AdmitNode, type AdmitResult, type PodAdmitHandler } from './admit-handler.ts';
import { Backoff } from '../backoff/index.ts';
import type { PodSetup } from './pod-setup.ts';
import type { PodStatusContributor } from './pod-status-contributor.ts';
import type { PodNetwork } from './pod-network.ts';
import { PodWorker } from './pod-worker.ts';
import type { PodRunner } from './pod-runner.ts';
import { WorkQueue } from './work-queue.ts';
import type { PodStarts } from './pod-starts.ts';
import { needsSync } from './pod-changes.ts';
import { mergePodConditions } from './pod-status.ts';
import type { Events } from '../events/index.ts';
import { podStartDuration, podWorkerDuration } from '../metrics/index.ts';
import type { ProbeManager } from '../probes/index.ts';
import { StatusCoalescer } from './status-coalescer.ts';

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
  /** Run in order for each new pod; the first rejection fails the pod with its reason. */
  admitHandlers: readonly PodAdmitHandler[];
  resyncMs: number;
  /** Pods synced at once; default: no limit (upstream runs one goroutine per pod). */
  concurrency?: number;
  /** Restart and image-pull back-off (default 10 s doubling to 300 s); tests shorten it. */
  backoff?: { initialMs: number; maxMs: number };
  /** The node's prober: probes and lifecycle hooks of container runs (absent: not run). */
  probes?: ProbeManager;
  /** Applied in order to every status before it is compared and posted (DRA: allocatedResourcesStatus). */
  statusContributors?: readonly PodStatusContributor[];
  /** Counts the pods in their first sync (the event recorder and interim statuses yield to them). */
  starts?: PodStarts;
  /** How long after a first sync began its interim status may wait for a burst to end (default {@link INTERIM_YIELD_MS}); tests shorten it. */
  interimYieldMs?: number;
}

const keyOf = (p: V1Pod) => `${p.metadata!.namespace}/${p.metadata!.name}`;

interface Entry {
  uid: string;
  worker?: PodRunner;
  rejected?: boolean;
  posted?: string;
  deleting?: boolean;
  /** Its deletion tore its volumes and dir down and released its IPs: forgetting it has nothing left to clean. */
  cleaned?: boolean;
  /** The pod's status posts: one in flight, the newest waiting (upstream's status manager coalesces the same way). */
  poster?: StatusCoalescer<{ pod: V1Pod; status: V1PodStatus }>;
  /** When the pod was first seen (performance.now()), until its start was observed (kubelet_pod_start_duration_seconds). */
  seenAt?: number;
  /** The pod's resources (DRA claims) were released after its containers stopped for good. */
  released?: boolean;
  /** The pod a sync is running for now (its interim status may be posted meanwhile). */
  syncing?: V1Pod;
  /** Until when (`Date.now()`) its first sync's interim status may wait for a burst of first syncs to end. */
  interimBy?: number;
  /** Its first sync began (see {@link PodStarts}). */
  synced?: boolean;
  /** Set by {@link PodController.terminateAbnormally}: laid over every later status post; the pod is no longer synced. */
  final?: AbnormalTermination;
  /** The finished pod's volumes were torn down (upstream syncTerminatedPod); false: pending for a pod found finished at admission. */
  unmounted?: boolean;
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

/** A sync that takes longer than this posts an interim status (e.g. Pending/ContainerCreating during a slow pull). */
const INTERIM_STATUS_MS = 1000;
/**
 * Interim statuses posted at once, at most. The others wait their turn in a keyed queue,
 * and one whose sync ended meanwhile is not posted: that sync posts the newer status.
 * In a burst of 100 pods the first syncs all outlast the second (they wait on token
 * requests), and an interim PATCH per pod was a third of the API writes before Running;
 * a slow pull on a quiet node still shows ContainerCreating after a second
 * (bench/README.md, issue 17, "Interim statuses yield").
 */
const INTERIM_POSTS_AT_ONCE = 4;
/**
 * How long after its first sync began a pod's interim status may wait while a burst of
 * first syncs (2 or more, {@link PodStarts}) runs, as events do: in a 100-pod burst the
 * interim PATCHes competed with the token requests and Running PATCHes the pods wait for
 * (bench/README.md, issue 17, "Interim statuses wait for the burst"). A pod starting
 * alone still shows ContainerCreating after {@link INTERIM_STATUS_MS}.
 */
const INTERIM_YIELD_MS = 10_000;

/** Runs the pods bound to this node. */
export class PodController {
  private readonly desired = new Map<string, V1Pod>();
  private readonly entries = new Map<string, Entry>();
  private readonly queue: WorkQueue;
  /** Pods whose interim status waits to be posted (see {@link INTERIM_POSTS_AT_ONCE}). */
  private readonly interim: WorkQueue;
  private readonly restartBackoff: Backoff;
  private readonly pullBackoff: Backoff;
  /** Volume set-up retries, like upstream's volume operations: 500 ms doubling to 2m2s. */
  private readonly volumeBackoff: Backoff;
  private resync?: NodeJS.Timeout;
  private admitting: Promise<void> = Promise.resolve();
  private stopping = false;
  /** Aborted by {@link PodController.shutdown}. */
  private readonly stopped = new AbortController();

  constructor(private readonly o: PodControllerOptions) {
    this.restartBackoff = new Backoff(o.backoff?.initialMs, o.backoff?.maxMs);
    this.pullBackoff = new Backoff(o.backoff?.initialMs, o.backoff?.maxMs);
    this.volumeBackoff = new Backoff(500, 122_000);
    // No limit by default: a pod waiting for a slot behind others' token requests and mounts was most
    // of a burst's start latency with 32 (bench/README.md, issue 17 branch burst2).
    this.queue = new WorkQueue((k) => this.timedSync(k), o.concurrency ?? Infinity);
    this.interim = new WorkQueue((k) => this.postInterim(k), INTERIM_POSTS_AT_ONCE);
  }

  /** Starts periodic resyncs. */
  start(): void {
    this.resync = setInterval(() => {
      for (const k of this.desired.keys()) this.queue.add(k);
    }, this.o.resyncMs);
    this.resync.unref();
  }

  /** A pod was added or changed. */
  upsert(pod: V1Pod): void {
    if (this.stopping) return;
    const key = keyOf(pod);
    const prev = this.desired.get(key);
    this.desired.set(key, pod);
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
    this.desired.delete(key);
    this.cancel(key);
    this.queue.add(key);
  }

  private cancel(key: string, uid?: string): void {
    const entry = this.entries.get(key);
    if (entry?.worker && (uid === undefined || entry.uid === uid)) entry.worker.cancel?.();
  }

  /** Releases the pod-level resources of a pod whose containers stopped for good, once per entry. */
  private async releaseResources(pod: V1Pod, entry: Entry): Promise<void> {
    if (entry.released || !this.o.setup.releaseResources) return;
    entry.released = true;
    await this.o.setup.releaseResources(pod);
  }

  /** Pods currently admitted and not finished (for admission and the kubelet API). */
  activePods(): V1Pod[] {
    const out: V1Pod[] = [];
    for (const [k, e] of this.entries) {
      const pod = this.desired.get(k);
      if (pod && e.worker && !e.rejected && !e.final && !e.worker.finished(pod)) out.push(pod);
    }
    return out;
  }

  /** The pod and its worker for a key (the kubelet API's log lookups). */
  lookup(key: string): { pod: V1Pod; worker?: PodRunner } | undefined {
    const pod = this.desired.get(key);
    return pod ? { pod, worker: this.entries.get(key)?.worker } : undefined;
  }

  /** All pods this node knows about. */
  pods(): V1Pod[] {
    return [...this.desired.values()];
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

  private async sync(key: string): Promise<void> {
    const pod = this.desired.get(key);
    let entry = this.entries.get(key);
    if (entry && (!pod || pod.metadata!.uid !== entry.uid)) {
      await this.forget(key, entry, pod);
      entry = undefined;
      if (!pod) return;
    }
    if (!pod) return;
    if (pod.metadata!.deletionTimestamp) return this.deleting(key, pod, entry);
    if (!entry) entry = await this.admitSerially(key, pod);
    if (entry.rejected || entry.final || !entry.worker) {
      // A pod found finished at admission: its volumes are torn down here, outside the serial admission.
      if (entry.unmounted === false) await this.unmountFinished(key, pod, entry);
      return;
    }
    // A pod's first sync lasts until its status after it was posted (the events recorder yields meanwhile).
    const firstSyncEnded = entry.synced ? undefined : this.o.starts?.begin();
    entry.synced = true;
    try {
      if (!entry.worker.finished(pod)) {
        const interim = setTimeout(() => this.interim.add(key), INTERIM_STATUS_MS);
        entry.interimBy = firstSyncEnded ? Date.now() + (this.o.interimYieldMs ?? INTERIM_YIELD_MS) : undefined;
        entry.syncing = pod;
        try {
          await entry.worker.reconcile(pod);
        } finally {
          clearTimeout(interim);
          entry.syncing = undefined;
        }
      }
      // Upstream unprepares a finished pod's claims after its containers stopped and before its terminal status is posted.
      if (entry.worker.finished(pod)) await this.releaseResources(pod, entry);
      await this.post(pod, entry, entry.worker.status(pod));
    } finally {
      firstSyncEnded?.();
    }
    if (!entry.worker.finished(pod)) return;
    // Upstream tears the sandbox (and its IP) down once a pod finished; status.podIP stays as posted.
    await this.o.network?.release(pod);
    await this.unmountFinished(key, pod, entry);
  }

  /**
   * Upstream `syncTerminatedPod`: a pod that finished for good has its volumes torn
   * down without waiting for its deletion (CSI: NodeUnpublish, NodeUnstage when it
   * was the last user). A failure is logged and retried with the volume back-off.
   */
  private async unmountFinished(key: string, pod: V1Pod, entry: Entry): Promise<void> {
    if (entry.unmounted) return;
    try {
      await this.o.setup.unmountVolumes(pod);
      entry.unmounted = true;
      this.volumeBackoff.reset(`${entry.uid}/unmount`);
    } catch (e) {
      const ms = this.volumeBackoff.next(`${entry.uid}/unmount`);
      this.o.log.warn({ pod: key, err: String(e), retryInMs: ms }, 'unmounting the volumes of a finished pod failed, will retry');
      this.queue.addAfter(key, ms);
    }
  }

  /** Admits one pod at a time, like upstream's HandlePodAdditions, so two pods never share the same free resources. */
  private admitSerially(key: string, pod: V1Pod): Promise<Entry> {
    const run = this.admitting.then(() => this.admit(key, pod));
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
    return { routed, verdict: await runAdmitHandlers(this.o.admitHandlers, pod, () => admitContext(this.o.admitNode, (admitted ??= this.activePods()))) };
  }

  private async admit(key: string, pod: V1Pod): Promise<Entry> {
    const entry: Entry = { uid: pod.metadata!.uid!, seenAt: performance.now() };
    this.entries.set(key, entry);
    if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') {
      // Finished before nodelet (re)started: nothing runs; what it left mounted is torn down by sync.
      entry.rejected = true;
      entry.unmounted = false;
      await this.releaseResources(pod, entry);
      await this.o.network?.release(pod);
      return entry;
    }
    const { routed, verdict } = await this.verdict(pod);
    if ('retryAfterMs' in routed) {
      this.entries.delete(key);
      this.o.log.info({ pod: key, retryAfterMs: routed.retryAfterMs }, `cannot route the pod yet: ${routed.message}`);
      this.queue.addAfter(key, routed.retryAfterMs);
      return entry;
    }
    if (!verdict.admit) {
      entry.rejected = true;
      const message = `Pod was rejected: ${verdict.message}`;
      this.event(pod, 'Warning', verdict.reason, verdict.message);
      void this.post(pod, entry, { phase: 'Failed', reason: verdict.reason, message, conditions: pod.status?.conditions, startTime: new Date() });
      return entry;
    }
    const provider = (routed as { provider: AnyProvider }).provider;
    const deps = {
      setup: this.o.setup,
      hostIP: this.o.hostIP,
      network: this.o.network,
      requeue: (ms: number) => this.queue.addAfter(key, ms),
      context: (p: V1Pod, signal: AbortSignal) => this.context(p, signal),
      event: (type: 'Normal' | 'Warning', reason: string, note: string, fieldPath?: string) => this.event(pod, type, reason, note, fieldPath),
      probes: this.o.probes,
    };
    entry.worker = new PodWorker(pod, { ...deps, provider, backoff: { restart: this.restartBackoff, pull: this.pullBackoff, volume: this.volumeBackoff } });
    return entry;
  }

  private context(pod: V1Pod, signal: AbortSignal): PodContext {
    return {
      log: this.o.log.child({ pod: keyOf(pod) }),
      event: (type, reason, message) => this.event(pod, type, reason, message),
      signal,
      podDir: this.o.setup.podDir(pod),
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
  private post(pod: V1Pod, entry: Entry, status: V1PodStatus): Promise<void> {
    entry.poster ??= new StatusCoalescer((s) => this.postNow(s.pod, entry, s.status));
    return entry.poster.offer({ pod, status });
  }

  private async postNow(pod: V1Pod, entry: Entry, given: V1PodStatus): Promise<void> {
    const f = entry.final;
    // The status contributors' parts (DRA allocatedResourcesStatus) before the comparison with what was posted.
    for (const c of this.o.statusContributors ?? []) given = c.contribute(pod, given);
    const status = f
      ? { ...given, phase: 'Failed', reason: f.reason, message: f.message, conditions: mergePodConditions(given.conditions, f.conditions ?? [], new Date()) }
      : given;
    const text = JSON.stringify(status);
    if (text === entry.posted) return;
    try {
      await this.o.sink.patchStatus(pod, status);
      entry.posted = text;
      if (entry.seenAt !== undefined && allRunning(status)) {
        podStartDuration.observe((performance.now() - entry.seenAt) / 1000);
        entry.seenAt = undefined;
      }
      pod.status = { ...pod.status, ...status };
    } catch (e) {
      this.o.log.warn({ pod: keyOf(pod), err: String(e) }, 'failed to update pod status, will retry');
      this.queue.addAfter(keyOf(pod), 1000);
    }
  }

  private graceMs(pod: V1Pod): number {
    const s = pod.metadata?.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
    return Math.max(0, s) * 1000;
  }

  private async deleting(key: string, pod: V1Pod, entry?: Entry): Promise<void> {
    if (entry?.deleting) return;
    if (entry) entry.deleting = true;
    if (entry?.worker) {
      await entry.worker.terminate(pod, this.graceMs(pod));
      await this.post(pod, entry, entry.worker.status(pod));
    }
    try {
      await this.o.setup.teardown(pod);
    } catch (e) {
      // Upstream keeps the pod object until its volumes are unmounted; retry.
      this.o.log.warn({ pod: key, err: String(e) }, 'volume teardown failed, will retry');
      if (entry) entry.deleting = false;
      this.queue.addAfter(key, 2000);
      return;
    }
    await this.o.network?.release(pod);
    if (entry) entry.cleaned = true;
    try {
      await this.o.sink.deletePod(pod);
    } catch (e) {
      this.o.log.warn({ pod: key, err: String(e) }, 'failed to delete pod object, will retry');
      if (entry) entry.deleting = false;
      this.queue.addAfter(key, 2000);
    }
  }

  private async forget(key: string, entry: Entry, replacement?: V1Pod): Promise<void> {
    this.entries.delete(key);
    const old = entry.worker;
    if (!old) return;
    const pod = { metadata: { uid: entry.uid, name: key.split('/')[1], namespace: key.split('/')[0] }, spec: { containers: [] } } as V1Pod;
    await old.terminate(pod, 0);
    // After a deletion the object goes last (teardown first, as upstream): its DELETED event finds nothing to clean.
    if (!entry.cleaned && (!replacement || replacement.metadata!.uid !== entry.uid)) {
      await this.o.setup.teardown(pod).catch(() => undefined);
      await this.o.network?.release(pod);
    }
  }

  /**
   * Stops an admitted pod for good and fails it, as upstream's
   * `TerminatePodAbnormallyAndWait` (graceful node shutdown uses it): aborts what is in
   * flight, stops its containers through the normal stop path within `graceMs`, then
   * posts phase `Failed` with `reason`, `message` and `conditions`. The pod is no longer
   * synced nor counted as active; a later deletion still cleans it up. Resolves once the
   * status was posted (or its post failed and was queued for retry); never rejects.
   */
  async terminateAbnormally(pod: V1Pod, t: AbnormalTermination): Promise<void> {
    const key = keyOf(pod);
    const entry = this.entries.get(key);
    if (!entry?.worker || entry.rejected || entry.final || entry.uid !== pod.metadata?.uid) return;
    const current = this.desired.get(key) ?? pod;
    entry.final = t;
    this.o.log.info({ pod: key, graceMs: t.graceMs, reason: t.reason }, 'terminating pod abnormally');
    entry.worker.cancel?.();
    await entry.worker.terminate(current, t.graceMs);
    await this.releaseResources(current, entry);
    await this.post(current, entry, entry.worker.status(current));
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
    await Promise.all([this.queue.shutdown(), this.interim.shutdown()]);
    await Promise.all(
      [...this.entries.entries()].map(([k, e]) => {
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

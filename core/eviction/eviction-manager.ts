/**
 * The eviction manager, after upstream's `pkg/kubelet/eviction/eviction_manager.go`:
 * every monitoring period (10 s) it observes the signals, works out which
 * thresholds are met, reports the node's pressure conditions, and — when a
 * threshold has been met for its grace period — reclaims node-level resources
 * (unused images, for disk signals) and, if that was not enough, evicts **one**
 * pod, ranked for the starved resource. Its admit handler refuses BestEffort pods
 * under memory pressure and every pod under any other pressure (critical pods pass).
 *
 *   tick ──► observe ──► met = thresholdsMet(all) ∪ thresholdsMet(previously met, + minimum reclaim)
 *             │
 *             ├──► conditions: last observed now for each met signal's condition; a condition
 *             │    stays True until the transition period passed since it was last observed
 *             │    (change ──► node status poked, `NodeHasInsufficientMemory`-style node event)
 *             │
 *             └──► met for their grace period (hard: at once)? ── no ──► done
 *                    │ yes: the starved resource (memory > disk > pids)
 *                    ▼
 *                  disk? ──► delete unused images ──► re-observe ──(resolved)──► done
 *                    │
 *                    ▼
 *                  rank active pods ──► evict the first non-critical one:
 *                  Failed / Evicted / upstream's message, DisruptionTarget, Warning Evicted event
 *
 *   condition state, per condition:
 *     False ──(threshold met)──► True ──(not met for the transition period)──► False
 *                                 ▲ └──(met again: period restarts)──┘
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import type { Events } from '../events/index.ts';
import type { AbnormalTermination, AdmitResult, PodAdmitHandler } from '../pods/index.ts';
import { evictionMessage, podQos, rankDiskPressure, rankMemoryPressure, rankPIDPressure, type PodUsageStats, type StatsFn } from './ranking.ts';
import { observeSignals, type SignalSources } from './signals.ts';
import {
  buildThresholds,
  conditionsFor,
  conditionsLastObservedAt,
  conditionsObservedSince,
  mergeThresholds,
  SIGNAL_CONDITION,
  SIGNAL_RESOURCE,
  thresholdQuantity,
  thresholdsFirstObservedAt,
  thresholdsMet,
  thresholdsMetGracePeriod,
  type Observations,
  type PressureCondition,
  type Threshold,
  type ThresholdSettings,
} from './thresholds.ts';

const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;
/** Upstream `immediateEvictionGracePeriodSeconds`: the grace of a pod evicted for a hard threshold. */
const IMMEDIATE_GRACE_MS = 1000;
const CONDITION_ORDER: readonly PressureCondition[] = ['MemoryPressure', 'DiskPressure', 'PIDPressure'];
/** The node event reasons of a condition turning True / False (upstream nodestatus setters' `recordEventFunc`). */
const CONDITION_EVENTS: Readonly<Record<PressureCondition, [string, string]>> = {
  MemoryPressure: ['NodeHasInsufficientMemory', 'NodeHasSufficientMemory'],
  DiskPressure: ['NodeHasDiskPressure', 'NodeHasNoDiskPressure'],
  PIDPressure: ['NodeHasInsufficientPID', 'NodeHasSufficientPID'],
};

/** The eviction settings (NodeletOptions' eviction fields). */
export interface EvictionSettings extends ThresholdSettings {
  readonly evictionPressureTransitionPeriodMs: number;
  readonly evictionMaxPodGracePeriodSeconds: number;
  readonly evictionMonitoringPeriodMs: number;
}

/** Dependencies of the eviction manager. */
export interface EvictionManagerOptions {
  readonly nodeName: string;
  readonly settings: EvictionSettings;
  readonly log: Logger;
  readonly events: Events;
  /** Where signals are read (or a function observing them, for tests). */
  readonly signals: SignalSources | (() => Promise<Observations>);
  /** Pods admitted and not finished. */
  activePods(): V1Pod[];
  /** Memory usage of the running pods, by pod UID. */
  podStats(): Promise<ReadonlyMap<string, PodUsageStats>>;
  /** Ephemeral-storage bytes a pod uses (emptyDirs, logs); asked only under disk pressure. */
  podDiskUsage?(pod: V1Pod): Promise<number>;
  /** Deletes unused images to free `bytes`; resolves to the bytes freed. */
  reclaimImages?(bytes: number): Promise<number>;
  /** Stops a pod for good (`PodController.terminateAbnormally`). */
  terminate(pod: V1Pod, t: AbnormalTermination): Promise<void>;
  /** Clock (ms); tests pass their own. */
  now?(): number;
}

/** True for pods the kubelet never evicts (upstream `IsCriticalPod`: static, mirror, or system-critical priority). */
export function isCriticalPod(pod: V1Pod): boolean {
  const a = pod.metadata?.annotations ?? {};
  const source = a['kubernetes.io/config.source'];
  return (pod.spec?.priority ?? 0) >= SYSTEM_CRITICAL_PRIORITY || a['kubernetes.io/config.mirror'] !== undefined || (source !== undefined && source !== 'api');
}

/** Memory before disk before pids (upstream `sortThresholdsByEvictionPriority` puts memory first). */
function byEvictionPriority(a: Threshold, b: Threshold): number {
  return CONDITION_ORDER.indexOf(SIGNAL_CONDITION[a.signal]) - CONDITION_ORDER.indexOf(SIGNAL_CONDITION[b.signal]);
}

/** Observes pressure, reports it and evicts pods; see the file header. */
export class EvictionManager {
  private readonly thresholds: Threshold[];
  private met: Threshold[] = [];
  private firstObservedAt = new Map<Threshold, number>();
  private lastObservedAt = new Map<PressureCondition, number>();
  private conditions: PressureCondition[] = [];
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private readonly conditionListeners: (() => void)[] = [];

  constructor(private readonly o: EvictionManagerOptions) {
    this.thresholds = buildThresholds(o.settings);
  }

  /** Calls `listener` when the pressure conditions change (the node controller's poke, in cluster mode). */
  onConditionsChanged(listener: () => void): void {
    this.conditionListeners.push(listener);
  }

  private now(): number {
    return this.o.now?.() ?? Date.now();
  }

  private observe(): Promise<Observations> {
    const s = this.o.signals;
    return typeof s === 'function' ? s() : observeSignals(s);
  }

  /** The thresholds in force (hard and soft). */
  get configured(): readonly Threshold[] {
    return this.thresholds;
  }

  /** The pressure conditions now True on the node. */
  pressure(): { memory: boolean; disk: boolean; pid: boolean } {
    return {
      memory: this.conditions.includes('MemoryPressure'),
      disk: this.conditions.includes('DiskPressure'),
      pid: this.conditions.includes('PIDPressure'),
    };
  }

  /** Upstream's eviction admit handler (`Admit`). */
  admitHandler(): PodAdmitHandler {
    return { name: 'eviction', admit: (pod) => this.admit(pod) };
  }

  private admit(pod: V1Pod): AdmitResult {
    if (this.conditions.length === 0 || isCriticalPod(pod)) return { admit: true };
    if (this.conditions.length === 1 && this.conditions[0] === 'MemoryPressure') {
      if (podQos(pod) !== 'BestEffort') return { admit: true };
      const tolerates = (pod.spec?.tolerations ?? []).some(
        (t) =>
          (t.effect === undefined || t.effect === '' || t.effect === 'NoSchedule') &&
          ((t.operator === 'Exists' && (t.key === undefined || t.key === '')) || t.key === 'node.kubernetes.io/memory-pressure'),
      );
      if (tolerates) return { admit: true };
    }
    return { admit: false, reason: 'Evicted', message: `The node had condition: [${this.conditions.join(' ')}]. ` };
  }

  /** One pass (upstream `synchronize`); resolves to the key of the pod it evicted, if any. */
  async synchronize(): Promise<string | undefined> {
    if (this.thresholds.length === 0) return undefined;
    const now = this.now();
    const obs = await this.observe();
    let met = thresholdsMet(this.thresholds, obs, false);
    if (this.met.length) met = mergeThresholds(met, thresholdsMet(this.met, obs, true));
    this.firstObservedAt = thresholdsFirstObservedAt(met, this.firstObservedAt, now);
    this.lastObservedAt = conditionsLastObservedAt(conditionsFor(met), this.lastObservedAt, now);
    const conditions = conditionsObservedSince(this.lastObservedAt, this.o.settings.evictionPressureTransitionPeriodMs, now).sort(
      (a, b) => CONDITION_ORDER.indexOf(a) - CONDITION_ORDER.indexOf(b),
    );
    if (conditions.join() !== this.conditions.join()) {
      this.o.log.info({ conditions, observations: obs }, 'eviction manager: node pressure conditions changed');
      for (const c of CONDITION_ORDER) {
        const [on, off] = CONDITION_EVENTS[c];
        const was = this.conditions.includes(c);
        const is = conditions.includes(c);
        if (was !== is) this.o.events.emit(this.nodeRef(), 'Normal', is ? on : off, `Node ${this.o.nodeName} status is now: ${is ? on : off}`);
      }
      this.conditions = conditions;
      for (const l of this.conditionListeners) l();
    }
    this.met = thresholdsMetGracePeriod(this.firstObservedAt, now);
    if (this.met.length === 0) return undefined;
    const t = [...this.met].sort(byEvictionPriority)[0]!;
    const resource = SIGNAL_RESOURCE[t.signal];
    const o = obs[t.signal]!;
    this.o.log.warn({ signal: t.signal, available: o.available, threshold: thresholdQuantity(t.value, o.capacity) }, 'eviction manager: attempting to reclaim');
    this.o.events.emit(this.nodeRef(), 'Warning', 'EvictionThresholdMet', `Attempting to reclaim ${resource}`);
    if (SIGNAL_CONDITION[t.signal] === 'DiskPressure' && (t.signal === 'imagefs.available' || t.signal === 'nodefs.available') && this.o.reclaimImages) {
      const want = thresholdQuantity(t.value, o.capacity) + (t.minReclaim ? thresholdQuantity(t.minReclaim, o.capacity) : 0) - o.available;
      const freed = await this.o.reclaimImages(Math.max(1, want));
      if (freed > 0) {
        this.o.log.info({ freedBytes: freed, signal: t.signal }, 'eviction manager: unused images deleted');
        const after = await this.observe();
        if (thresholdsMet([t], after, true).length === 0) return undefined;
      }
    }
    return this.evictOne(t, obs);
  }

  private nodeRef() {
    return { kind: 'Node', namespace: 'default', name: this.o.nodeName, uid: this.o.nodeName };
  }

  private async evictOne(t: Threshold, obs: Observations): Promise<string | undefined> {
    const pods = this.o.activePods().filter((p) => !isCriticalPod(p));
    if (pods.length === 0) {
      this.o.log.warn({ signal: t.signal }, 'eviction manager: no pod to evict');
      return undefined;
    }
    const byUid = await this.o.podStats();
    const cond = SIGNAL_CONDITION[t.signal];
    const disk = new Map<V1Pod, number>();
    if (cond === 'DiskPressure' && this.o.podDiskUsage) for (const p of pods) disk.set(p, await this.o.podDiskUsage(p));
    const stats: StatsFn = (p) => {
      const s = byUid.get(p.metadata?.uid ?? '');
      if (cond !== 'DiskPressure') return s;
      const d = disk.get(p);
      return d === undefined ? undefined : { containers: s?.containers ?? [], diskBytes: d };
    };
    const ranked =
      cond === 'MemoryPressure' ? rankMemoryPressure(pods, stats) : cond === 'DiskPressure' ? rankDiskPressure(pods, stats) : rankPIDPressure(pods, stats);
    const pod = ranked[0]!;
    const o = obs[t.signal]!;
    const resource = SIGNAL_RESOURCE[t.signal];
    const message = evictionMessage(resource, pod, stats(pod), { quantity: thresholdQuantity(t.value, o.capacity), available: o.available });
    const m = pod.metadata!;
    const key = `${m.namespace}/${m.name}`;
    this.o.log.info({ pod: key, signal: t.signal, qos: podQos(pod) }, 'eviction manager: evicting pod');
    this.o.events.emit({ kind: 'Pod', namespace: m.namespace!, name: m.name!, uid: m.uid! }, 'Warning', 'Evicted', message);
    await this.o.terminate(pod, {
      graceMs: this.graceMs(t, pod),
      reason: 'Evicted',
      message,
      conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message }],
    });
    return key;
  }

  /** Hard: 1 s; soft: the pod's own, capped by `evictionMaxPodGracePeriodSeconds` when positive. */
  private graceMs(t: Threshold, pod: V1Pod): number {
    if (t.hard) return IMMEDIATE_GRACE_MS;
    const own = (pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000;
    const max = this.o.settings.evictionMaxPodGracePeriodSeconds * 1000;
    return max > 0 ? Math.min(max, own) : own;
  }

  /** Runs {@link synchronize} every monitoring period (passes never overlap) until {@link stop}. */
  start(): void {
    const tick = async () => {
      try {
        await this.synchronize();
      } catch (e) {
        this.o.log.warn({ err: String(e) }, 'eviction manager pass failed');
      }
      if (!this.stopped) this.timer = setTimeout(() => void tick(), this.o.settings.evictionMonitoringPeriodMs);
    };
    this.timer = setTimeout(() => void tick(), 0);
  }

  /** Stops the loop. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }
}

/**
 * Eviction thresholds and signal observations, as upstream's
 * `pkg/kubelet/eviction/helpers.go`: thresholds from the settings maps, which
 * of them an observation meets (with the minimum reclaim added for thresholds
 * already met), how long soft ones have been met, and the node condition each
 * signal drives.
 */
import { parseThresholdValue, type EvictionSignal, type ThresholdValue } from '../config/index.ts';

/** One threshold (upstream `evictionapi.Threshold`, operator always LessThan). */
export interface Threshold {
  readonly signal: EvictionSignal;
  readonly value: ThresholdValue;
  /** 0 for hard thresholds; the time a soft one must stay met before it counts. */
  readonly gracePeriodMs: number;
  readonly hard: boolean;
  readonly minReclaim?: ThresholdValue;
}

/** What was observed for a signal: available and capacity, in bytes / inodes / pids. */
export interface Observation {
  readonly available: number;
  readonly capacity: number;
}

/** The observations of one pass, by signal (a signal that could not be observed is absent). */
export type Observations = Partial<Record<EvictionSignal, Observation>>;

/** The node conditions eviction reports. */
export type PressureCondition = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';

/** Which condition a signal drives (upstream `signalToNodeCondition`). */
export const SIGNAL_CONDITION: Readonly<Record<EvictionSignal, PressureCondition>> = {
  'memory.available': 'MemoryPressure',
  'nodefs.available': 'DiskPressure',
  'nodefs.inodesFree': 'DiskPressure',
  'imagefs.available': 'DiskPressure',
  'imagefs.inodesFree': 'DiskPressure',
  'pid.available': 'PIDPressure',
};

/** The resource a signal starves (upstream `signalToResource`), as named in eviction messages. */
export const SIGNAL_RESOURCE: Readonly<Record<EvictionSignal, string>> = {
  'memory.available': 'memory',
  'nodefs.available': 'ephemeral-storage',
  'nodefs.inodesFree': 'inodes',
  'imagefs.available': 'ephemeral-storage',
  'imagefs.inodesFree': 'inodes',
  'pid.available': 'pids',
};

/** The settings thresholds are built from (NodeletOptions' eviction fields). */
export interface ThresholdSettings {
  readonly evictionHard: Readonly<Record<string, string>>;
  readonly evictionSoft: Readonly<Record<string, string>>;
  readonly evictionSoftGracePeriodMs: Readonly<Record<string, number>>;
  readonly evictionMinimumReclaim: Readonly<Record<string, string>>;
}

/** Builds the thresholds (hard first); zero thresholds are dropped as upstream does. Settings were validated by core/config. */
export function buildThresholds(s: ThresholdSettings): Threshold[] {
  const out: Threshold[] = [];
  const add = (m: Readonly<Record<string, string>>, hard: boolean) => {
    for (const [signal, raw] of Object.entries(m)) {
      const value = parseThresholdValue(signal, raw);
      if (!value) continue;
      const rec = s.evictionMinimumReclaim[signal];
      const minReclaim = rec === undefined ? undefined : parseThresholdValue(signal, rec);
      out.push({
        signal: signal as EvictionSignal,
        value,
        hard,
        gracePeriodMs: hard ? 0 : (s.evictionSoftGracePeriodMs[signal] ?? 0),
        ...(minReclaim ? { minReclaim } : {}),
      });
    }
  };
  add(s.evictionHard, true);
  add(s.evictionSoft, false);
  return out;
}

/** A threshold value in units of the signal (upstream `GetThresholdQuantity`: percentage × capacity). */
export function thresholdQuantity(v: ThresholdValue, capacity: number): number {
  return 'quantity' in v ? Number(v.quantity) : Math.floor(capacity * v.percentage);
}

/**
 * The thresholds `obs` meets (upstream `thresholdsMet`): available < threshold,
 * plus the minimum reclaim when `enforceMinReclaim` (used for thresholds met in the
 * previous pass, so that a met threshold stays met until min-reclaim is recovered).
 */
export function thresholdsMet(thresholds: readonly Threshold[], obs: Observations, enforceMinReclaim: boolean): Threshold[] {
  return thresholds.filter((t) => {
    const o = obs[t.signal];
    if (!o) return false;
    let q = thresholdQuantity(t.value, o.capacity);
    if (enforceMinReclaim && t.minReclaim) q += thresholdQuantity(t.minReclaim, o.capacity);
    return o.available < q;
  });
}

/** Merges threshold lists without duplicates (upstream `mergeThresholds`). */
export function mergeThresholds(a: readonly Threshold[], b: readonly Threshold[]): Threshold[] {
  return [...a, ...b.filter((t) => !a.includes(t))];
}

/** Records when each threshold was first seen met; forgets those no longer met (upstream `thresholdsFirstObservedAt`). */
export function thresholdsFirstObservedAt(met: readonly Threshold[], last: ReadonlyMap<Threshold, number>, now: number): Map<Threshold, number> {
  return new Map(met.map((t) => [t, last.get(t) ?? now]));
}

/** The met thresholds whose grace period has passed (upstream `thresholdsMetGracePeriod`). */
export function thresholdsMetGracePeriod(observedAt: ReadonlyMap<Threshold, number>, now: number): Threshold[] {
  return [...observedAt].filter(([t, at]) => now - at >= t.gracePeriodMs).map(([t]) => t);
}

/** The conditions the thresholds drive, in first-seen order. */
export function conditionsFor(met: readonly Threshold[]): PressureCondition[] {
  return [...new Set(met.map((t) => SIGNAL_CONDITION[t.signal]))];
}

/** Records when each condition was last observed (upstream `nodeConditionsLastObservedAt`). */
export function conditionsLastObservedAt(
  conds: readonly PressureCondition[],
  last: ReadonlyMap<PressureCondition, number>,
  now: number,
): Map<PressureCondition, number> {
  const out = new Map(last);
  for (const c of conds) out.set(c, now);
  return out;
}

/** The conditions observed within the transition period (upstream `nodeConditionsObservedSince`). */
export function conditionsObservedSince(observedAt: ReadonlyMap<PressureCondition, number>, periodMs: number, now: number): PressureCondition[] {
  return [...observedAt].filter(([, at]) => now - at < periodMs).map(([c]) => c);
}

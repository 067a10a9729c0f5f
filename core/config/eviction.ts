/**
 * Eviction settings as upstream's kubelet reads them (`--eviction-hard`,
 * `--eviction-soft`, `--eviction-soft-grace-period`, `--eviction-minimum-reclaim`
 * and the KubeletConfiguration maps `evictionHard`, ...): a map from an eviction
 * signal to a quantity (`100Mi`) or a percentage (`10%`) of the signal's capacity.
 * Kept here (not in core/eviction) so that flag parsing validates them without
 * loading the eviction manager; core/eviction turns them into thresholds.
 */
import { nodeletError } from '../errors/index.ts';
import { parseQuantity, quantityValue } from '../quantity/index.ts';
import { parseGoDuration } from './duration.ts';

/** The eviction signals nodelet observes (upstream `pkg/kubelet/eviction/api`). */
export const EVICTION_SIGNALS = [
  'memory.available',
  'nodefs.available',
  'nodefs.inodesFree',
  'imagefs.available',
  'imagefs.inodesFree',
  'pid.available',
] as const;

/** One eviction signal. */
export type EvictionSignal = (typeof EVICTION_SIGNALS)[number];

/** A threshold's value: an absolute quantity (bytes, inodes, pids) or a fraction (0..1) of capacity. */
export type ThresholdValue = { readonly quantity: bigint } | { readonly percentage: number };

/** True for a signal nodelet observes. */
export function isEvictionSignal(s: string): s is EvictionSignal {
  return (EVICTION_SIGNALS as readonly string[]).includes(s);
}

function signalOf(raw: string): EvictionSignal {
  const s = raw.trim();
  if (!isEvictionSignal(s)) throw nodeletError('NDL_CONFIG_INVALID_VALUE', `unsupported eviction signal ${s}`);
  return s;
}

/**
 * Parses a threshold value as upstream's `parseThresholdStatement`: `N%` (0-100) or a
 * non-negative quantity; undefined for `0`/`0%` (upstream drops such thresholds).
 */
export function parseThresholdValue(signal: string, raw: string): ThresholdValue | undefined {
  const v = raw.trim();
  if (v.endsWith('%')) {
    const p = Number(v.slice(0, -1));
    if (v.length < 2 || !Number.isFinite(p) || p < 0 || p > 100)
      throw nodeletError('NDL_CONFIG_INVALID_VALUE', `eviction percentage threshold ${signal} must be >= 0% and <= 100%: ${v}`);
    return p === 0 ? undefined : { percentage: p / 100 };
  }
  let q: bigint;
  try {
    q = quantityValue(parseQuantity(v));
  } catch {
    throw nodeletError('NDL_CONFIG_INVALID_VALUE', `invalid eviction threshold ${signal}: ${JSON.stringify(v)} is not a quantity or a percentage`);
  }
  if (q < 0n) throw nodeletError('NDL_CONFIG_INVALID_VALUE', `eviction threshold ${signal} must be positive: ${v}`);
  return q === 0n ? undefined : { quantity: q };
}

/**
 * Parses `signal<value,signal<value` (`sep` `<`, the threshold flags) or
 * `signal=value,...` (`sep` `=`, grace periods and minimum reclaim) into a map,
 * checking each signal; the values are checked by the caller.
 */
export function parseSignalMap(raw: string, sep: '<' | '='): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of raw.split(',')) {
    if (part.trim() === '') continue;
    const i = part.indexOf(sep);
    if (i <= 0) throw nodeletError('NDL_CONFIG_INVALID_VALUE', `invalid eviction statement ${JSON.stringify(part.trim())}, expected <signal>${sep}<value>`);
    out[signalOf(part.slice(0, i))] = part.slice(i + 1).trim();
  }
  return out;
}

/** Checks every entry of a threshold map (KubeletConfiguration `evictionHard`/`evictionSoft`/`evictionMinimumReclaim`). */
export function checkThresholdMap(m: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(m)) {
    const s = signalOf(k);
    parseThresholdValue(s, String(v));
    out[s] = String(v).trim();
  }
  return out;
}

/** Parses grace periods per signal (`memory.available=1m30s`) into milliseconds. */
export function parseGracePeriodMap(m: Readonly<Record<string, string>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(m)) {
    const s = signalOf(k);
    let ms: number;
    try {
      ms = parseGoDuration(String(v).trim());
    } catch {
      throw nodeletError('NDL_CONFIG_INVALID_VALUE', `invalid grace period ${s}=${String(v)}`);
    }
    if (ms < 0) throw nodeletError('NDL_CONFIG_INVALID_VALUE', `eviction grace period ${s} must be non-negative: ${String(v)}`);
    out[s] = ms;
  }
  return out;
}

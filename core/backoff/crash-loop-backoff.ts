/**
 * The container restart back-off (CrashLoopBackOff), as upstream's kubelet
 * builds it (`newCrashLoopBackOff` and `flowcontrol.NewBackOff` in
 * pkg/kubelet/kubelet.go): 10 s doubling to a max of 300 s, or to
 * `crashLoopBackOff.maxContainerRestartPeriod` (KubeletCrashLoopBackOffMax,
 * 1 s to 300 s), the first delay lowered to that max when it is shorter; an
 * entry idle for 600 s starts again from the first delay (upstream's fixed
 * HasExpiredFunc, whatever the max).
 *
 *   max 300 s (default)   10, 20, 40, 80, 160, 300, 300 … s
 *   max 30 s              10, 20, 30, 30 … s
 *   max 2 s               2, 2, 2 … s
 */
import { Backoff } from './keyed-backoff.ts';

/** Upstream's first restart delay. */
export const CRASH_LOOP_INITIAL_MS = 10_000;
/** Upstream's default max (`MaxContainerBackOff`). */
export const CRASH_LOOP_MAX_MS = 300_000;
/** How long an idle entry is kept (upstream: 600 s). */
export const CRASH_LOOP_RESET_MS = 600_000;

/** Options of {@link crashLoopBackoff}: the max (`maxContainerRestartPeriod`); the rest are for tests. */
export interface CrashLoopBackoffOptions {
  readonly maxMs?: number;
  readonly initialMs?: number;
  readonly resetAfterMs?: number;
  readonly now?: () => number;
}

/** The restart back-off capped at `maxMs` (default 300 s). */
export function crashLoopBackoff(o: CrashLoopBackoffOptions = {}): Backoff {
  const maxMs = o.maxMs ?? CRASH_LOOP_MAX_MS;
  const initialMs = Math.min(o.initialMs ?? CRASH_LOOP_INITIAL_MS, maxMs);
  return new Backoff(initialMs, maxMs, o.now ?? Date.now, { resetAfterMs: o.resetAfterMs ?? CRASH_LOOP_RESET_MS });
}

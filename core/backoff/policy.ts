/**
 * The one exponential back-off of nodelet: a policy (upstream's variants as
 * parameters) and the delay sequence it gives.
 *
 *   delay₁ = initialMs
 *   delayₙ = min(delayₙ₋₁ × factor, maxMs)        (factor defaults to 2)
 *   wait   = delay × (1 + random × jitter)        (jitter defaults to 0)
 *
 * Upstream's variants, as used here:
 *   flowcontrol.Backoff (restarts, pulls)  10 s ×2 ≤ 300 s, reset after 600 s idle (restarts:
 *     crash-loop-backoff.ts, max configurable)
 *   exponentialbackoff (plugin operations,  500 ms ×2 ≤ 2 min 2 s, no reset
 *     volume set-up)
 *   node lease ensure (read or create)      200 ms ×2 ≤ 7 s, from the start each time
 *   wait.Backoff (CSINode updates)          4 steps, 10 ms ×5, 10 % jitter
 *   certificate rotation                    2 s ×2, 10 % jitter, 4 steps, then every 32 s
 */

/** An exponential back-off policy. */
export interface BackoffPolicy {
  /** First delay. */
  readonly initialMs: number;
  /** Cap of the delay (defaults to no cap). */
  readonly maxMs?: number;
  /** Growth per failure (defaults to 2). */
  readonly factor?: number;
  /** Extra random fraction added to each wait, upstream `wait.Jitter` (defaults to 0). */
  readonly jitter?: number;
  /** An entry idle longer than this starts again at `initialMs` (defaults to never). */
  readonly resetAfterMs?: number;
}

/** The delay after `prev` (or the first delay when there was none). */
export function nextDelay(p: BackoffPolicy, prev?: number): number {
  if (prev === undefined) return p.initialMs;
  return Math.min(prev * (p.factor ?? 2), p.maxMs ?? Infinity);
}

/** The first `n` delays of a policy (without jitter). */
export function delaySequence(p: BackoffPolicy, n: number): number[] {
  const out: number[] = [];
  let d: number | undefined;
  for (let i = 0; i < n; i++) out.push((d = nextDelay(p, d)));
  return out;
}

/** `delayMs` with the policy's jitter applied, upstream `wait.Jitter`. */
export function withJitter(p: BackoffPolicy, delayMs: number, random: () => number = Math.random): number {
  return p.jitter ? delayMs * (1 + random() * p.jitter) : delayMs;
}

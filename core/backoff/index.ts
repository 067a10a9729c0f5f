/**
 * The one back-off of nodelet: a policy with upstream's variants as
 * parameters (`policy.ts`), per-key state (`keyed-backoff.ts`), the container
 * restart back-off built on it (`crash-loop-backoff.ts`) and a bounded retry
 * loop (`retry.ts`).
 */
export { delaySequence, nextDelay, withJitter, type BackoffPolicy } from './policy.ts';
export { Backoff, type BackoffOptions } from './keyed-backoff.ts';
export { crashLoopBackoff, CRASH_LOOP_MAX_MS, type CrashLoopBackoffOptions } from './crash-loop-backoff.ts';
export { retry, type RetryPolicy } from './retry.ts';

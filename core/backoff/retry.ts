/**
 * Go's `wait.ExponentialBackoff` with the errors collected (as the CSI node
 * info manager uses it): runs `fn` up to `steps` times, waiting the policy's
 * jittered delays between tries.
 */
import { errorDetail, nodeletError } from '../errors/index.ts';
import { nextDelay, withJitter, type BackoffPolicy } from './policy.ts';

/** Upstream `wait.Backoff`: a policy with a number of tries. */
export interface RetryPolicy extends BackoffPolicy {
  /** Tries in all. */
  readonly steps: number;
}

/**
 * Runs `fn` until it succeeds or `steps` tries failed; the final error (NDL_RETRY_EXHAUSTED) has the detail
 * `<what>: timed out waiting for the condition; caused by: <aggregate>`
 * (each failure described by `describe`).
 */
export async function retry(p: RetryPolicy, what: string, fn: () => Promise<void>, describe: (e: unknown) => string = errorDetail): Promise<void> {
  const errs: string[] = [];
  let delay = nextDelay(p);
  for (let i = 0; i < p.steps; i++) {
    try {
      await fn();
      return;
    } catch (e) {
      errs.push(describe(e));
    }
    if (i < p.steps - 1) {
      await new Promise((r) => setTimeout(r, withJitter(p, delay)));
      delay = nextDelay(p, delay);
    }
  }
  throw nodeletError('NDL_RETRY_EXHAUSTED', `${what}: timed out waiting for the condition; caused by: ${aggregate(errs)}`);
}

/** utilerrors.NewAggregate(...).Error(): duplicates once; brackets when more than one. */
function aggregate(msgs: string[]): string {
  if (msgs.length === 1) return msgs[0]!;
  const seen = [...new Set(msgs)];
  return seen.length === 1 ? seen[0]! : `[${seen.join(', ')}]`;
}

/** Go's `wait.ExponentialBackoff` with the errors collected (as the node info manager uses it). */
import { apiMessage } from '../../kube/client.ts';

/** Upstream `wait.Backoff`. */
export interface Backoff {
  readonly steps: number;
  readonly durationMs: number;
  readonly factor: number;
  readonly jitter: number;
}

/** Upstream nodeinfomanager `updateBackoff`: 4 tries, 10 ms ×5, 10 % jitter. */
export const UPDATE_BACKOFF: Backoff = { steps: 4, durationMs: 10, factor: 5, jitter: 0.1 };

/**
 * Go's `wait.ExponentialBackoff` with the errors collected: runs `fn` up to
 * `steps` times; the final error reads
 * `<what>: timed out waiting for the condition; caused by: <aggregate>`.
 */
export async function retry(b: Backoff, what: string, fn: () => Promise<void>): Promise<void> {
  const errs: string[] = [];
  let delay = b.durationMs;
  for (let i = 0; i < b.steps; i++) {
    try {
      await fn();
      return;
    } catch (e) {
      errs.push(apiMessage(e));
    }
    if (i < b.steps - 1) {
      await new Promise((r) => setTimeout(r, delay * (1 + Math.random() * b.jitter)));
      delay *= b.factor;
    }
  }
  throw new Error(`${what}: timed out waiting for the condition; caused by: ${aggregate(errs)}`);
}

/** utilerrors.NewAggregate(...).Error(): duplicates once; brackets when more than one. */
function aggregate(msgs: string[]): string {
  if (msgs.length === 1) return msgs[0]!;
  const seen = [...new Set(msgs)];
  return seen.length === 1 ? seen[0]! : `[${seen.join(', ')}]`;
}

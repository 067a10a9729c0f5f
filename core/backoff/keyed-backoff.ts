/**
 * Per-key exponential back-off like client-go's flowcontrol.Backoff, as the
 * kubelet uses it for container restarts and image pulls: 10 s doubling to
 * 300 s; an entry untouched for 2 × max (10 min) starts again from the
 * beginning. Other policies (no reset, another factor) come as the fourth
 * argument; plugin operations, the node lease and volume set-up use it too.
 */
import { nextDelay, type BackoffPolicy } from './policy.ts';

/** Policy knobs of {@link Backoff} besides initial and max. */
export type BackoffOptions = Pick<BackoffPolicy, 'factor' | 'resetAfterMs'>;

/** Per-key back-off state. */
export class Backoff {
  private readonly entries = new Map<string, { delayMs: number; lastUpdate: number }>();
  private readonly policy: BackoffPolicy;
  private readonly resetAfterMs: number;

  constructor(
    initialMs = 10_000,
    maxMs = 300_000,
    private readonly now: () => number = Date.now,
    options: BackoffOptions = {},
  ) {
    this.policy = { initialMs, maxMs, factor: options.factor };
    this.resetAfterMs = options.resetAfterMs ?? 2 * maxMs;
  }

  /** Records a failure at `at`: the next allowed attempt is `at + delay`. */
  next(key: string, at = this.now()): number {
    const e = this.entries.get(key);
    if (!e || at - e.lastUpdate > this.resetAfterMs) {
      const delayMs = nextDelay(this.policy);
      this.entries.set(key, { delayMs, lastUpdate: at });
      return delayMs;
    }
    e.delayMs = nextDelay(this.policy, e.delayMs);
    e.lastUpdate = at;
    return e.delayMs;
  }

  /** Milliseconds left before `key` may be tried again after an event at `since` (0 = go). */
  remaining(key: string, since: number): number {
    const e = this.entries.get(key);
    if (!e || this.now() - e.lastUpdate > this.resetAfterMs) return 0;
    return Math.max(0, since + e.delayMs - this.now());
  }

  /** The time of the last failure of `key`, or undefined. */
  lastUpdate(key: string): number | undefined {
    return this.entries.get(key)?.lastUpdate;
  }

  /** The current delay of `key` (for messages), or 0. */
  delay(key: string): number {
    return this.entries.get(key)?.delayMs ?? 0;
  }

  /** Forgets `key`. */
  reset(key: string): void {
    this.entries.delete(key);
  }

  /** Forgets every key starting with `prefix` (a pod's containers). */
  resetPrefix(prefix: string): void {
    for (const k of this.entries.keys()) if (k.startsWith(prefix)) this.entries.delete(k);
  }
}

/**
 * Per-key exponential back-off like client-go's flowcontrol.Backoff, as the
 * kubelet uses it for container restarts and image pulls: 10 s doubling to
 * 300 s; an entry untouched for 2 × max (10 min) starts again from the beginning.
 */
export class Backoff {
  private readonly entries = new Map<string, { delayMs: number; lastUpdate: number }>();

  constructor(private readonly initialMs = 10_000, private readonly maxMs = 300_000, private readonly now: () => number = Date.now) {}

  /** Records a failure at `at`: the next allowed attempt is `at + delay`. */
  next(key: string, at = this.now()): number {
    const e = this.entries.get(key);
    if (!e || at - e.lastUpdate > 2 * this.maxMs) {
      this.entries.set(key, { delayMs: this.initialMs, lastUpdate: at });
      return this.initialMs;
    }
    e.delayMs = Math.min(e.delayMs * 2, this.maxMs);
    e.lastUpdate = at;
    return e.delayMs;
  }

  /** Milliseconds left before `key` may be tried again after an event at `since` (0 = go). */
  remaining(key: string, since: number): number {
    const e = this.entries.get(key);
    if (!e || this.now() - e.lastUpdate > 2 * this.maxMs) return 0;
    return Math.max(0, since + e.delayMs - this.now());
  }

  /** The current delay of `key` (for messages), or 0. */
  delay(key: string): number { return this.entries.get(key)?.delayMs ?? 0; }

  /** Forgets `key`. */
  reset(key: string): void { this.entries.delete(key); }

  /** Forgets every key starting with `prefix` (a pod's containers). */
  resetPrefix(prefix: string): void { for (const k of this.entries.keys()) if (k.startsWith(prefix)) this.entries.delete(k); }
}

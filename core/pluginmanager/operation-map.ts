/**
 * At most one operation in flight per key (a socket path), with exponential
 * back-off after failures: upstream `pkg/util/goroutinemap` with
 * `exponentialbackoff` (500 ms, doubling, capped at 2 min 2 s). A success
 * clears the key's back-off.
 */
import { Backoff } from '../backoff/index.ts';

/** First wait after a failure. */
export const INITIAL_BACKOFF_MS = 500;
/** Longest wait between retries (2 min 2 s). */
export const MAX_BACKOFF_MS = 2 * 60_000 + 2_000;

/** Why {@link OperationMap.run} did not start an operation; neither is an error. */
export type NotStarted =
  | { readonly started: false; readonly reason: 'pending' }
  | { readonly started: false; readonly reason: 'backoff'; readonly retryAt: number; readonly lastError: unknown };

/** Result of {@link OperationMap.run}. */
export type RunResult = { readonly started: true } | NotStarted;

/** Options for {@link OperationMap}. */
export interface OperationMapOptions {
  /** Clock, for tests. Defaults to Date.now. */
  now?: () => number;
  /** Called when an operation fails (after its back-off is updated). */
  onError?: (key: string, err: unknown, backoffMs: number) => void;
}

/** Runs keyed async operations, one per key at a time. */
export class OperationMap {
  private readonly pending = new Map<string, Promise<void>>();
  private readonly backoff: Backoff;
  private readonly lastError = new Map<string, unknown>();
  private readonly now: () => number;
  private readonly onError: OperationMapOptions['onError'];

  constructor(options: OperationMapOptions = {}) {
    this.now = options.now ?? Date.now;
    this.backoff = new Backoff(INITIAL_BACKOFF_MS, MAX_BACKOFF_MS, this.now, { resetAfterMs: Infinity });
    this.onError = options.onError;
  }

  /** Starts `op` under `key` unless one is already running or the key is backing off. */
  run(key: string, op: () => Promise<void>): RunResult {
    if (this.pending.has(key)) return { started: false, reason: 'pending' };
    const lastErrorTime = this.backoff.lastUpdate(key);
    const durationMs = this.backoff.delay(key);
    if (lastErrorTime !== undefined && this.now() - lastErrorTime <= durationMs) {
      return { started: false, reason: 'backoff', retryAt: lastErrorTime + durationMs, lastError: this.lastError.get(key) };
    }
    const running = (async () => {
      try {
        await op();
        this.backoff.reset(key);
        this.lastError.delete(key);
      } catch (err) {
        this.failed(key, err);
      } finally {
        this.pending.delete(key);
      }
    })();
    this.pending.set(key, running);
    return { started: true };
  }

  /** True while an operation for `key` runs. */
  isPending(key: string): boolean {
    return this.pending.has(key);
  }

  /** The current back-off for `key` in ms (0 when none). */
  backoffMs(key: string): number {
    return this.backoff.delay(key);
  }

  /** Resolves when every operation running now has finished. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all(this.pending.values());
  }

  private failed(key: string, err: unknown): void {
    const durationMs = this.backoff.next(key);
    this.lastError.set(key, err);
    this.onError?.(key, err, durationMs);
  }
}

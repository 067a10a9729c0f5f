/**
 * At most one operation in flight per key (a socket path), with exponential
 * back-off after failures: upstream `pkg/util/goroutinemap` with
 * `exponentialbackoff` (500 ms, doubling, capped at 2 min 2 s). A success
 * clears the key's back-off.
 */

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

interface Backoff {
  lastErrorTime: number;
  durationMs: number;
  lastError: unknown;
}

/** Options for {@link OperationMap}. */
export interface OperationMapOptions {
  /** Clock, for tests. Defaults to Date.now. */
  now?: () => number;
  /** Called when an operation fails (after its back-off is updated). */
  onError?: (key: string, err: unknown, backoffMs: number) => void;
}

/** Runs keyed async operations, one per key at a time. */
export class OperationMap {
  readonly #pending = new Map<string, Promise<void>>();
  readonly #backoff = new Map<string, Backoff>();
  readonly #now: () => number;
  readonly #onError: OperationMapOptions['onError'];

  constructor(options: OperationMapOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#onError = options.onError;
  }

  /** Starts `op` under `key` unless one is already running or the key is backing off. */
  run(key: string, op: () => Promise<void>): RunResult {
    if (this.#pending.has(key)) return { started: false, reason: 'pending' };
    const b = this.#backoff.get(key);
    if (b && this.#now() - b.lastErrorTime <= b.durationMs) {
      return { started: false, reason: 'backoff', retryAt: b.lastErrorTime + b.durationMs, lastError: b.lastError };
    }
    const running = (async () => {
      try {
        await op();
        this.#backoff.delete(key);
      } catch (err) {
        this.#failed(key, err);
      } finally {
        this.#pending.delete(key);
      }
    })();
    this.#pending.set(key, running);
    return { started: true };
  }

  /** True while an operation for `key` runs. */
  isPending(key: string): boolean {
    return this.#pending.has(key);
  }

  /** The current back-off for `key` in ms (0 when none). */
  backoffMs(key: string): number {
    return this.#backoff.get(key)?.durationMs ?? 0;
  }

  /** Resolves when every operation running now has finished. */
  async idle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all(this.#pending.values());
  }

  #failed(key: string, err: unknown): void {
    const prev = this.#backoff.get(key);
    const durationMs = prev ? Math.min(prev.durationMs * 2, MAX_BACKOFF_MS) : INITIAL_BACKOFF_MS;
    this.#backoff.set(key, { lastErrorTime: this.#now(), durationMs, lastError: err });
    this.#onError?.(key, err, durationMs);
  }
}

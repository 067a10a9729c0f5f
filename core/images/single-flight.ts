/**
 * One in-flight operation per key, shared by every caller that asks while it runs.
 * Each caller may abort its own wait; the shared operation is aborted only when
 * every caller waiting on it has aborted.
 *
 *   idle ──do(key)──▶ running(waiters=1) ──do(key)──▶ running(waiters+1)
 *                        │  caller aborts: waiters-1 (0 → abort the operation)
 *                        └─ settles ──▶ idle (key forgotten; result handed to every waiter)
 */

interface Flight<T> {
  readonly promise: Promise<T>;
  readonly controller: AbortController;
  waiters: number;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted', 'AbortError');
}

/** Deduplicates concurrent async operations by key. */
export class SingleFlight<T> {
  private readonly flights = new Map<string, Flight<T>>();

  /** Number of operations running now. */
  get size(): number {
    return this.flights.size;
  }

  /** Runs `run` for `key`, or joins the run already in flight. */
  do(key: string, run: (signal: AbortSignal) => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    let flight = this.flights.get(key);
    if (!flight) {
      const controller = new AbortController();
      const promise = Promise.resolve()
        .then(() => run(controller.signal))
        .finally(() => this.flights.delete(key));
      flight = { promise, controller, waiters: 0 };
      this.flights.set(key, flight);
    }
    flight.waiters++;
    return signal ? this.wait(flight, signal) : flight.promise;
  }

  private wait(flight: Flight<T>, signal: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        if (--flight.waiters === 0) flight.controller.abort(abortReason(signal));
        reject(abortReason(signal));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      flight.promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }
}

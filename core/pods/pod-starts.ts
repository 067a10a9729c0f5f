/**
 * How many pods are in their first sync now (admitted, not yet started or
 * failed), and a way to wait while they are. The event recorder yields to pod
 * starts with it: a first sync's token request and status patch are on the
 * path to Running, an event about it is not (bench/README.md,
 * "Events yield to pod starts"). A burst (two or more at once) holds events
 * until it is over, at most 10 s past their emit; a pod starting alone holds
 * them until its status is posted, at most 1 s (a slow pull's `Pulling` shows
 * that late, no later). The composition root makes one and hands it to the
 * pod controller, which counts (and whose interim statuses wait for bursts),
 * and to the recorder, which waits: through {@link PodStarts.quiet} (no
 * burst) and {@link PodStarts.idle} (no first sync at all), each bounded by a
 * deadline.
 *
 *     idle (n = 0) ── a first sync begins ─► alone (n = 1) ── a second begins ─► burst (n ≥ 2)
 *       ▲  ▲ (idle waiters resolve)             │ it ends                          │ first syncs end until n < 2
 *       │  └────────────────────────────────────┘                                  ▼ (quiet waiters resolve)
 *       └────────────────────────────── the last one ends ◄─────────────────── alone (n = 1)
 */
export class PodStarts {
  private count = 0;
  /** First syncs at once that make a burst. */
  static readonly BURST = 2;
  /** One promise per burst, shared by every waiter. */
  private burst?: { promise: Promise<void>; resolve: () => void };
  /** One promise per period with any first sync, shared by every waiter. */
  private busy?: { promise: Promise<void>; resolve: () => void };

  /** A pod's first sync began; call the returned function once when it ended. */
  begin(): () => void {
    this.count++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (--this.count >= PodStarts.BURST) return;
      this.burst?.resolve();
      this.burst = undefined;
      if (this.count > 0) return;
      this.busy?.resolve();
      this.busy = undefined;
    };
  }

  /** Pods in their first sync now. */
  get active(): number {
    return this.count;
  }

  /** Settles once no burst runs, at `deadline` (a `Date.now()` value), or when `signal` aborts, whichever comes first. */
  quiet(deadline: number, signal?: AbortSignal): Promise<void> {
    return until(this.settled(), deadline, signal);
  }

  /** Settles once no pod is in its first sync, at `deadline` (a `Date.now()` value), or when `signal` aborts, whichever comes first. */
  idle(deadline: number, signal?: AbortSignal): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return until((this.busy ??= deferred()).promise, deadline, signal);
  }

  /** Undefined unless a burst of pods is in its first sync; else settles once fewer than {@link PodStarts.BURST} are. */
  settled(): Promise<void> | undefined {
    if (this.count < PodStarts.BURST) return undefined;
    return (this.burst ??= deferred()).promise;
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Settles when `busy` does (at once when undefined), at `deadline`, or when `signal` aborts. */
async function until(busy: Promise<void> | undefined, deadline: number, signal?: AbortSignal): Promise<void> {
  const left = deadline - Date.now();
  if (!busy || left <= 0 || signal?.aborted) return;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  await Promise.race([
    busy,
    new Promise<void>((r) => {
      timer = setTimeout(r, left);
      onAbort = () => r();
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
  ]);
  clearTimeout(timer);
  if (onAbort) signal?.removeEventListener('abort', onAbort);
}

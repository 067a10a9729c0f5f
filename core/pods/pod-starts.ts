/**
 * How many pods are in their first sync now (admitted, not yet started or
 * failed), and a way to wait while a burst of them is. The event recorder
 * yields to pod starts with it: a first sync's token request and status patch
 * are on the path to Running, an event about it is not (bench/README.md,
 * issue 17, "Events yield to pod starts"). One pod starting alone is no burst:
 * its events (a slow pull's `Pulling`) are not held. The composition root makes
 * one and hands it to the pod controller, which counts (and whose interim
 * statuses wait too), and to the recorder, which waits: both through
 * {@link PodStarts.quiet}, bounded by a deadline.
 *
 *     idle (n < 2) ── a second first sync begins ─► burst (n ≥ 2) ── first syncs end until n < 2 ─► idle (waiters resolve)
 */
export class PodStarts {
  private count = 0;
  /** First syncs at once that make a burst. */
  static readonly BURST = 2;
  /** One promise per busy period, shared by every waiter. */
  private idle?: { promise: Promise<void>; resolve: () => void };

  /** A pod's first sync began; call the returned function once when it ended. */
  begin(): () => void {
    this.count++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (--this.count >= PodStarts.BURST) return;
      this.idle?.resolve();
      this.idle = undefined;
    };
  }

  /** Pods in their first sync now. */
  get active(): number {
    return this.count;
  }

  /** Settles once no burst runs, at `deadline` (a `Date.now()` value), or when `signal` aborts, whichever comes first. */
  async quiet(deadline: number, signal?: AbortSignal): Promise<void> {
    const busy = this.settled();
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

  /** Undefined unless a burst of pods is in its first sync; else settles once fewer than {@link PodStarts.BURST} are. */
  settled(): Promise<void> | undefined {
    if (this.count < PodStarts.BURST) return undefined;
    if (!this.idle) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.idle = { promise, resolve };
    }
    return this.idle.promise;
  }
}

/**
 * How many pods are in their first sync now (admitted, not yet started or
 * failed), and a way to wait until none is. The event recorder yields to pod
 * starts with it: a first sync's token request and status patch are on the
 * path to Running, an event about it is not (bench/README.md, issue 17,
 * "Events yield to pod starts"). The composition root makes one and hands it
 * to the pod controller, which counts, and to the recorder, which waits.
 *
 *     0 ── first sync begins ─► n > 0 ── the last first sync ends ─► 0 (waiters resolve)
 */
export class PodStarts {
  private count = 0;
  /** One promise per busy period, shared by every waiter. */
  private idle?: { promise: Promise<void>; resolve: () => void };

  /** A pod's first sync began; call the returned function once when it ended. */
  begin(): () => void {
    this.count++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (--this.count > 0) return;
      this.idle?.resolve();
      this.idle = undefined;
    };
  }

  /** Pods in their first sync now. */
  get active(): number {
    return this.count;
  }

  /** Undefined when no pod is in its first sync; else settles once none is. */
  settled(): Promise<void> | undefined {
    if (this.count === 0) return undefined;
    if (!this.idle) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.idle = { promise, resolve };
    }
    return this.idle.promise;
  }
}

/**
 * One pod's status posts, coalesced as upstream's status manager does: at most
 * one post in flight; statuses that arrive while it is in flight replace each
 * other, and only the newest is posted after it. So a burst of state changes
 * within one sync costs one PATCH per state the API server still has to learn,
 * not one per change (the caller skips statuses equal to the last posted one).
 *
 *     IDLE ── offer(s) ─► POSTING(s) ── done, nothing newer ─► IDLE
 *                            │   ▲
 *              offer(s') ────┘   └── done, newest s' waiting: post s'
 *              (replaces any waiting status)
 */

/** Serialises and coalesces the posts of one object's status. */
export class StatusCoalescer<T> {
  private waiting?: { value: T };
  private running?: Promise<void>;

  /** `send` posts one status; it should not reject (a rejection ends the current drain, later offers start a new one). */
  constructor(private readonly send: (value: T) => Promise<void>) {}

  /**
   * Offers `value` as the newest status. Resolves once a status at least as new as
   * `value` was sent (or its send failed).
   */
  offer(value: T): Promise<void> {
    this.waiting = { value };
    this.running ??= this.drain();
    return this.running;
  }

  /** True while a status is being sent or waits to be. */
  get busy(): boolean {
    return this.running !== undefined;
  }

  private async drain(): Promise<void> {
    try {
      // The check of `waiting` and the reset of `running` happen in one synchronous step, so no offer is lost.
      while (this.waiting) {
        const { value } = this.waiting;
        this.waiting = undefined;
        await this.send(value);
      }
    } finally {
      this.running = undefined;
    }
  }
}

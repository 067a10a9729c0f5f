/**
 * The apiserver's `Retry-After`, honoured as client-go's rest client does (`rest/with_retry.go`,
 * `checkWait`): an answer 429, or 5xx, with a `Retry-After` of whole seconds is sent again after
 * that long (here at most {@link MAX_RETRY_AFTER_MS}), up to {@link MAX_RETRIES} times, and then
 * handed to the caller; any other answer is handed over at once. A request with a timeout gives
 * up at its timeout, waiting or not (client-go's context deadline).
 *
 * One thing more than client-go: the wait holds every request of the client, not only the one
 * refused. nodelet posts each pod's status on its own (upstream's status manager posts one pod at
 * a time), so waiting per request alone would still send one request a second per pod with
 * something to post. From a refusal until an answer without `Retry-After`, the client is
 * throttled: its requests go one at a time, in the order they came, none before the last
 * refusal's `Retry-After` ran out. A throttled client therefore sends about one request per
 * `Retry-After` in all. Watches take their turn too (`ApiTransport.watch`): a watch refused with
 * `Retry-After` throttles the client, and its owner's next attempt waits it out.
 *
 *   OPEN ── an answer 429/5xx + Retry-After ──► THROTTLED: requests queue; one at a time,
 *     ▲     (notBefore = now + Retry-After)         none before notBefore
 *     └──────────── an answer without Retry-After ◄──┘
 *
 *   In both states nothing is sent before notBefore; an error without an answer changes nothing.
 */

/** client-go's default `maxRetries` of a request. */
export const MAX_RETRIES = 10;
/** The longest `Retry-After` waited: a larger one is cut to this, so one answer cannot stall the client for long. */
export const MAX_RETRY_AFTER_MS = 10_000;

/** The wait an answer asks for: 429 or 5xx with a `Retry-After` of whole seconds (client-go's `checkWait`), in ms, capped; else undefined. */
export function retryAfterMs(status: number, header: string | string[] | undefined): number | undefined {
  if (status !== 429 && status < 500) return undefined;
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value || !/^\d+$/.test(value)) return undefined; // an HTTP-date is not honoured, as in client-go
  return Math.min(Number(value) * 1000, MAX_RETRY_AFTER_MS);
}

/**
 * Reports how a request's attempt ended: `answered` when a response came (the status line),
 * with the wait it asked for, if any. Call it once.
 */
export type AttemptOutcome = (answered: boolean, retryAfterMs?: number) => void;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Resolves true when `p` settles before `deadline` (ms since the epoch), false at the deadline. */
function before(p: Promise<void>, deadline: number): Promise<boolean> {
  if (deadline === Infinity) return p.then(() => true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
    void p.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** The client-wide part of honouring `Retry-After` (see the module comment); one per apiserver and identity. */
export class RetryAfterGate {
  private throttled = false;
  private notBefore = 0;
  /** Resolves when the last queued request's attempt ended (the queue while throttled). */
  private tail: Promise<void> = Promise.resolve();

  /** True from a refusal with `Retry-After` until an answer without one. */
  get throttling(): boolean {
    return this.throttled;
  }

  /**
   * Waits for a request's turn to be sent: while throttled after the requests queued before
   * it; in any case not before the last refusal's `Retry-After` ran out. Resolves to the
   * function that reports the attempt's outcome, or to undefined at `deadline` (ms since the
   * epoch) when the turn would come after it.
   */
  async turn(deadline = Infinity): Promise<AttemptOutcome | undefined> {
    let release = () => {};
    if (this.throttled) {
      const earlier = this.tail;
      const mine = new Promise<void>((r) => (release = r));
      this.tail = earlier.then(() => mine);
      if (!(await before(earlier, deadline))) {
        release();
        return undefined;
      }
    }
    // notBefore may move while waiting (a refusal of a request sent earlier).
    for (let now = Date.now(); this.notBefore > now; now = Date.now()) {
      if (this.notBefore > deadline) {
        await sleep(deadline - now);
        release();
        return undefined;
      }
      await sleep(this.notBefore - now);
    }
    let done = false;
    return (answered, retryAfterMs) => {
      if (done) return;
      done = true;
      if (retryAfterMs !== undefined) {
        this.throttled = true;
        this.notBefore = Math.max(this.notBefore, Date.now() + retryAfterMs);
      } else if (answered) this.throttled = false;
      release();
    };
  }
}

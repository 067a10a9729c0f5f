/**
 * A keyed work queue like client-go's: a key waiting is queued once however
 * often it is added; a key being processed is never processed twice at once
 * (an add during processing re-queues it after); `addAfter` delays an add.
 */
export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly active = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly timers = new Map<string, { at: number; t: NodeJS.Timeout }>();
  private running = 0;
  private stopped = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly handler: (key: string) => Promise<void>,
    private readonly concurrency = 8,
  ) {}

  /** Queues `key` now. */
  add(key: string): void {
    if (this.stopped) return;
    if (this.active.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.queue.push(key);
    this.pump();
  }

  /** Queues `key` after `ms`; an earlier pending delayed add wins. */
  addAfter(key: string, ms: number): void {
    if (ms <= 0) return this.add(key);
    const at = Date.now() + ms;
    const prev = this.timers.get(key);
    if (prev && prev.at <= at) return;
    if (prev) clearTimeout(prev.t);
    const t = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    t.unref();
    this.timers.set(key, { at, t });
  }

  /** Stops taking work; resolves when in-flight handlers have finished. */
  async shutdown(): Promise<void> {
    this.stopped = true;
    for (const { t } of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.queue.length = 0;
    this.queued.clear();
    await this.idle();
  }

  /** Resolves when nothing is running or queued. */
  idle(): Promise<void> {
    if (this.running === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private pump(): void {
    while (this.running < this.concurrency && this.queue.length > 0) {
      const key = this.queue.shift()!;
      this.queued.delete(key);
      this.active.add(key);
      this.running++;
      void this.handler(key)
        .catch(() => undefined)
        .finally(() => this.done(key));
    }
  }

  private done(key: string): void {
    this.active.delete(key);
    this.running--;
    if (this.dirty.delete(key)) this.add(key);
    this.pump();
    if (this.running === 0 && this.queue.length === 0) this.idleWaiters.splice(0).forEach((r) => r());
  }
}

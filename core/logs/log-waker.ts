/**
 * Wakes a log follower when something may have changed: a change in the log's
 * directory (appends, rotation), the writer finishing, the reader going away,
 * or, as a fallback for missed notifications, a poll interval.
 */
import { watch, type FSWatcher } from 'node:fs';

/** What a follower waits on between reads. */
export class LogWaker {
  private watcher: FSWatcher | undefined;
  private pending: (() => void) | undefined;
  private dirty = false;
  private readonly poke = (): void => {
    this.dirty = true;
    const wake = this.pending;
    this.pending = undefined;
    wake?.();
  };

  constructor(
    dir: string,
    private readonly pollMs: number,
    signal?: AbortSignal,
    finished?: Promise<unknown>,
  ) {
    try {
      this.watcher = watch(dir, { persistent: false }, this.poke);
      this.watcher.on('error', () => this.closeWatcher());
    } catch {
      this.watcher = undefined; // polling still works
    }
    signal?.addEventListener('abort', this.poke, { once: true });
    finished?.then(this.poke, this.poke);
  }

  /** Resolves at the next change (at once if one came since the last wait), or after the poll interval. */
  wait(): Promise<void> {
    if (this.dirty) {
      this.dirty = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending = undefined;
        resolve();
      }, this.pollMs);
      this.pending = () => {
        clearTimeout(timer);
        this.dirty = false;
        resolve();
      };
    });
  }

  /** Stops watching; a pending wait resolves. */
  close(): void {
    this.closeWatcher();
    this.poke();
  }

  private closeWatcher(): void {
    this.watcher?.close();
    this.watcher = undefined;
  }
}

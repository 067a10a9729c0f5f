/**
 * Worker threads for containers, started ahead of need. Starting a worker
 * (isolate + Node bootstrap + the worker's modules) costs ~30-50 ms of CPU;
 * running a cached module in a worker that is already up costs ~1-3 ms.
 *
 *   boot ──'ready'──► idle ──take()──► taken: runs one container, then the thread ends
 *     │                 │
 *     └──error/exit─────┴──► gone   (a failed boot rejects the oldest waiting take())
 *
 * `take()` hands out an idle worker, or else the next one to become ready
 * (first come, first served); `warm()` boots workers until `size` are idle or
 * booting beyond the waiting takes (the runner calls it once its container
 * runs, so a replacement is booted off the start path). At most `maxBooting`
 * workers boot at once: 100 workers booting together all finish late, a few
 * at a time let the first takers run early. A worker is never handed out twice (and its thread runs
 * at most one module anyway: see worker/wasi-worker.mjs).
 */
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { CRI_LOG_MODULE_URL } from '@nodelet/plugin-api/v1/toolkit';
import type { ModuleMessage, PingMessage, WasiWorkerData } from './worker-protocol.ts';

const WORKER_URL = new URL('./worker/wasi-worker.mjs', import.meta.url);

/** Options of {@link WorkerPool}. */
export interface WorkerPoolOptions {
  /** Workers kept idle (started and waiting for a container); 0 starts one per container on demand. */
  readonly size?: number;
  /** Workers booting at the same time (default {@link DEFAULT_MAX_BOOTING}). */
  readonly maxBooting?: number;
  /** Passed to `new Worker` (caps the worker's JS heap, not Wasm memory). */
  readonly resourceLimits?: ResourceLimits;
  /** Called with warnings an idle worker reports. */
  readonly onWarning?: (message: string) => void;
}

/** Default number of idle workers. */
export const DEFAULT_POOL_SIZE = 2;
/**
 * Default number of workers booting at once. Measured on 2 cores, 100 starts
 * at once: 4 gave the best median (1 and 2 leave a core idle during each
 * boot's message round trips; 100 makes every start wait ~0.6 s or more).
 */
export const DEFAULT_MAX_BOOTING = 4;

interface Waiter {
  resolve(w: Worker): void;
  reject(e: Error): void;
}

/** Pre-started worker threads, each handed out once. */
/** The smallest worker heap limit accepted; below it Node 24 aborts the process, not the worker. */
export const MIN_OLD_GENERATION_MB = 4;

export class WorkerPool {
  readonly size: number;
  private readonly maxBooting: number;
  private readonly opts: WorkerPoolOptions;
  private readonly idle: Worker[] = [];
  private readonly waiters: Waiter[] = [];
  /** Listeners the pool holds on workers it still owns (booting or idle). */
  private readonly owned = new Map<Worker, () => void>();
  private booting = 0;
  private broken = false;
  private closed = false;
  private onSettled: Array<() => void> = [];

  constructor(opts: WorkerPoolOptions = {}) {
    const heap = opts.resourceLimits?.maxOldGenerationSizeMb;
    // On Node 24 a worker whose heap cannot hold V8's start-up snapshot (1–2 MB) aborts the
    // whole process ("GC during deserialization") instead of failing the worker: refuse it.
    if (heap !== undefined && heap < MIN_OLD_GENERATION_MB) {
      throw new RangeError(`resourceLimits.maxOldGenerationSizeMb must be at least ${MIN_OLD_GENERATION_MB} (got ${heap})`);
    }
    this.size = Math.max(0, Math.floor(opts.size ?? DEFAULT_POOL_SIZE));
    this.maxBooting = Math.max(1, Math.floor(opts.maxBooting ?? DEFAULT_MAX_BOOTING));
    this.opts = opts;
  }

  /** Idle workers ready to run a container. */
  get idleCount(): number {
    return this.idle.length;
  }

  /** Workers starting. */
  get bootingCount(): number {
    return this.booting;
  }

  /** Starts filling the pool in the background (nothing when it is full or closed). */
  warm(): void {
    this.fill();
  }

  /**
   * A started worker for one container: the caller owns it from now on and
   * must post it exactly one run message. Rejects if the worker that would
   * have been handed out failed to start, or the pool is closed. Taking an
   * idle worker does not start its replacement (`new Worker` blocks the main
   * thread ~1 ms): call {@link warm} once the container runs.
   */
  take(): Promise<Worker> {
    if (this.closed) return Promise.reject(new Error('the worker pool is closed'));
    this.broken = false;
    const idle = this.idle.shift();
    if (idle) return Promise.resolve(this.release(idle)); // refilled by warm(), off the start path
    const taken = new Promise<Worker>((resolve, reject) => this.waiters.push({ resolve, reject }));
    this.fill();
    return taken;
  }

  /** Resolves once no worker is booting (for tests and measurements). */
  settled(): Promise<void> {
    if (this.booting === 0) return Promise.resolve();
    return new Promise((r) => this.onSettled.push(r));
  }

  /** Terminates the workers the pool still owns and rejects waiting takes; later takes reject. */
  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w.reject(new Error('the worker pool is closed'));
    const owned = [...this.owned.keys()];
    this.idle.length = 0;
    await Promise.all(owned.map((w) => w.terminate()));
  }

  // Boots workers until idle + booting covers the waiting takes plus `size` (just
  // the takes after a failed boot): when starts come faster than workers boot,
  // the extra `size` in flight are the next starts' head start.
  private fill(): void {
    if (this.closed) return;
    const target = this.waiters.length + (this.broken ? 0 : this.size);
    while (this.booting < this.maxBooting && this.idle.length + this.booting < target) this.boot();
  }

  private boot(): void {
    this.booting++;
    const boot: WasiWorkerData = { criLogUrl: CRI_LOG_MODULE_URL };
    const worker = new Worker(WORKER_URL, {
      workerData: boot,
      execArgv: [],
      argv: [],
      env: {},
      stdin: false,
      resourceLimits: this.opts.resourceLimits,
    });
    worker.postMessage({ type: 'ping' } satisfies PingMessage); // answered with 'ready' once the worker is up
    let ready = false;
    const onMessage = (m: ModuleMessage) => {
      if (m.type === 'warning') this.opts.onWarning?.(m.message);
      if (m.type !== 'ready' || ready) return;
      ready = true;
      this.booted();
      const waiter = this.waiters.shift();
      if (waiter) waiter.resolve(this.release(worker));
      else this.idle.push(worker);
      this.fill();
    };
    const onGone = (e: Error | number) => {
      this.release(worker);
      if (ready) {
        const i = this.idle.indexOf(worker);
        if (i >= 0) this.idle.splice(i, 1);
        return;
      }
      this.booted();
      this.broken = true;
      const why = typeof e === 'number' ? `exited with code ${e}` : e.message;
      this.waiters.shift()?.reject(new Error(`a worker thread failed to start: ${why}`));
      this.fill();
    };
    worker.on('message', onMessage);
    worker.on('error', onGone);
    worker.on('exit', onGone);
    this.owned.set(worker, () => {
      worker.off('message', onMessage);
      worker.off('error', onGone);
      worker.off('exit', onGone);
    });
  }

  private booted(): void {
    this.booting--;
    if (this.booting === 0) for (const r of this.onSettled.splice(0)) r();
  }

  // Drops the pool's listeners: the worker now belongs to its taker (or is gone).
  private release(worker: Worker): Worker {
    this.owned.get(worker)?.();
    this.owned.delete(worker);
    return worker;
  }
}

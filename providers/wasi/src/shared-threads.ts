/**
 * Worker threads shared by many preview1 modules (BestEffort pods): each runs
 * worker/wasi-worker.mjs in shared mode, where every module runs with JSPI and
 * a clock sleep suspends the module's stack instead of holding the thread.
 *
 * A shared thread's states:
 *
 *   booting ──'ready'──► up ──(modules come and go; the thread stays)──┐
 *      │                  │                                            │
 *      │                  │ terminate(why): a busy module would not stop,
 *      │                  │ a start function did not return, or a      │
 *      │                  │ thread beyond the first held no module for │
 *      │                  │ {@link EXTRA_IDLE_MS}                      │
 *      └──error/exit──────┴──────────────────────────────────► gone ◄──┘ close()
 *   (every module on a gone thread ends: 137, message `why`; the next
 *    take() boots a replacement)
 *
 * Threads are booted as they are needed, up to `size`: `warm()` (at an image pull) boots
 * the first, and `take()` places a module on the thread with the fewest modules among
 * those with room, booting another only when none has room. A thread has room when its
 * event loop is on time (a thread whose heartbeat is over {@link LATE_MS} late is running
 * a busy module) and was idle at least half of the last second ({@link FULL_UTILIZATION}:
 * busy modules that yield at their WASI calls or preemption points keep it on time but
 * use it). Sleeping modules cost a thread nothing, so one thread holds them all, and a
 * node that runs only those pays one thread's boot (~47 ms of CPU, ~14 MiB), not `size`'s.
 * When every thread is full, the module goes on the one with the fewest modules among
 * those on time (any, when none is). A thread beyond the first that has held no module for
 * {@link EXTRA_IDLE_MS} ends: what a burst needed does not stay when the node is quiet again.
 *
 * A module busy-looping without WASI calls cannot be preempted: it
 * delays every other module of its thread (their event-loop delay shows it,
 * see {@link SharedThreads.loads}); stopping it terminates the thread after the
 * runner's unwind delay, and the thread's other modules end with 137 and are
 * restarted by their pods' restart policy.
 */
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { type ThreadLoad } from '@nodelet/plugin-api/v1';
import { CRI_LOG_MODULE_URL } from '@nodelet/plugin-api/v1/toolkit';
import type { DoneMessage, ModuleMessage, PingMessage, SharedThreadMessage, WasiWorkerData } from './worker-protocol.ts';

const WORKER_URL = new URL('./worker/wasi-worker.mjs', import.meta.url);

/** Default number of shared threads (BestEffort modules are spread over them). */
export const DEFAULT_SHARED_THREADS = 2;

/**
 * Default JS heap of a shared thread. Its modules' linear memories are not
 * counted here (Wasm memory lives outside the JS heap); each module's
 * node:wasi instance, wrappers and log writer are (a few tens of KB).
 */
export const DEFAULT_SHARED_RESOURCE_LIMITS = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 4, stackSizeMb: 1 } as const;

/** A module that ends holding this much memory, the last on its shared thread, ends the thread (see {@link SharedThread.ended}). */
export const RELEASE_MEMORY_BYTES = 64 * 2 ** 20;

/** Heartbeat period of a shared thread in ms (worker/wasi-worker.mjs BEAT_MS). */
export const BEAT_MS = 100;

/** A thread whose heartbeat is this much later than due is busy now (placement avoids it). */
export const LATE_MS = 50;

/** A thread whose event loop was busy this share of the last second or more has no room for another module. */
export const FULL_UTILIZATION = 0.5;

/** A thread beyond the first that has held no module for this long ends (ms). */
export const EXTRA_IDLE_MS = 30_000;

/** Options of {@link SharedThreads}. */
export interface SharedThreadsOptions {
  /** Threads (default {@link DEFAULT_SHARED_THREADS}). */
  readonly size?: number;
  /** Passed to `new Worker` (default {@link DEFAULT_SHARED_RESOURCE_LIMITS}). */
  readonly resourceLimits?: ResourceLimits;
  /** How long a thread beyond the first stays without modules before it ends (default {@link EXTRA_IDLE_MS}). */
  readonly idleEndMs?: number;
  /** Called with warnings a thread reports outside of any module. */
  readonly onWarning?: (message: string) => void;
}

/** One shared thread. */
export class SharedThread {
  readonly worker: Worker;
  /** Modules placed on it (running or starting). */
  modules = 0;
  /** Set once the thread is gone; the reason its modules ended, if it was terminated on purpose. */
  goneBecause?: string;
  gone = false;
  readonly ready: Promise<void>;
  private readonly goneListeners = new Set<() => void>();
  /** Where each module's messages go, by its id (see {@link SharedThread.attach}). */
  private readonly inbox = new Map<number, (message: ModuleMessage | DoneMessage) => void>();
  private nextModule = 1;
  private readonly beat = new SharedArrayBuffer(24);
  private readonly forget: (t: SharedThread) => void;
  private readonly onEmpty: (t: SharedThread) => void;

  constructor(
    resourceLimits: ResourceLimits,
    onWarning: (m: string) => void,
    onGone: (t: SharedThread) => void,
    onEmpty: (t: SharedThread) => void = () => {},
  ) {
    this.forget = onGone;
    this.onEmpty = onEmpty;
    this.worker = new Worker(WORKER_URL, {
      workerData: { criLogUrl: CRI_LOG_MODULE_URL, shared: true, heartbeat: this.beat } satisfies WasiWorkerData,
      execArgv: [],
      argv: [],
      env: {},
      stdin: false,
      resourceLimits,
    });
    this.worker.postMessage({ type: 'ping' } satisfies PingMessage);
    this.ready = new Promise<void>((resolve, reject) => {
      this.worker.on('message', (m: SharedThreadMessage) => {
        if ('moduleId' in m) return this.inbox.get(m.moduleId)?.(m.message);
        if (m.type === 'ready') resolve();
        else if (m.type === 'warning') onWarning(m.message);
      });
      const gone = (e: Error | number) => {
        if (this.gone) return;
        this.gone = true;
        const why = `its shared worker thread ended (${typeof e === 'number' ? `exit code ${e}` : e.message})`;
        this.goneBecause ??= why;
        reject(new Error(why));
        onGone(this);
        for (const l of [...this.goneListeners]) l();
        this.goneListeners.clear();
      };
      this.worker.on('error', gone);
      this.worker.on('exit', gone);
    });
    this.ready.catch(() => {});
  }

  /**
   * A new module's id on this thread: its run message carries it (`moduleId`), and the
   * thread's messages tagged with it go to `fn` until {@link SharedThread.detach}.
   */
  attach(fn: (message: ModuleMessage | DoneMessage) => void): number {
    const id = this.nextModule++;
    this.inbox.set(id, fn);
    return id;
  }

  /** The module `id` ended: its messages (none should follow) are dropped. */
  detach(id: number): void {
    this.inbox.delete(id);
  }

  /** Calls `fn` once when the thread is gone (at once if it already is); returns the unsubscribe. */
  onGone(fn: () => void): () => void {
    if (this.gone) {
      fn();
      return () => {};
    }
    this.goneListeners.add(fn);
    return () => this.goneListeners.delete(fn);
  }

  /**
   * A module of this thread ended holding `memoryBytes` of linear memory. The memory of a module
   * that ended on a thread that goes on is not given back to the system (not even by a full GC
   * of the thread), so when it was big ({@link RELEASE_MEMORY_BYTES}) and no other module is left
   * on the thread, the thread is ended: its memory goes with it, no module is harmed, and the next
   * BestEffort start boots a replacement. (A big module that ends beside neighbours leaves its
   * memory with the thread until the thread ends.) Resolves once the thread exited when it ends
   * it: the module's container is stopped only then, so whoever waits on the stop (an eviction
   * that then observes memory again) sees the memory given back.
   */
  ended(memoryBytes: number): Promise<void> | undefined {
    if (this.modules === 0 && memoryBytes >= RELEASE_MEMORY_BYTES && !this.gone) {
      return this.terminate(`its last module held ${Math.round(memoryBytes / 2 ** 20)} MiB of memory, given back by ending the thread`);
    }
    if (this.modules === 0) this.onEmpty(this);
    return undefined;
  }

  /**
   * Ends the thread and every module on it, recording why (their exit message); resolves once it
   * exited. No new module is placed on it from now on.
   */
  async terminate(why: string): Promise<void> {
    this.goneBecause ??= why;
    this.forget(this);
    await this.worker.terminate();
  }

  /** Whether its heartbeat runs: it does while the thread holds a module (worker/wasi-worker.mjs), so an empty thread wakes no one. */
  beating(): boolean {
    return new Float64Array(this.beat)[0] !== 0;
  }

  /** How late its current heartbeat is, in ms (0 on time, or while it holds no module and does not beat). */
  lateMs(): number {
    const b = new Float64Array(this.beat);
    return b[0] === 0 ? 0 : Math.max(0, performance.timeOrigin + performance.now() - b[0]! - BEAT_MS);
  }

  /** The share of the last ~second its event loop was busy (the thread writes it every 10 beats; 0 before). */
  utilization(): number {
    return new Float64Array(this.beat)[2]!;
  }

  /** Event-loop delay in seconds (see {@link ThreadLoad}); resets the recorded maximum. */
  delaySeconds(): number {
    const b = new Float64Array(this.beat);
    const late = this.lateMs();
    const max = b[1]!;
    b[1] = 0;
    return Math.max(late, max) / 1000;
  }
}

/** The shared threads of the provider; see the file comment. */
export class SharedThreads {
  readonly size: number;
  private readonly threads: SharedThread[] = [];
  private readonly limits: ResourceLimits;
  private readonly onWarning: (m: string) => void;
  private readonly idleEndMs: number;
  /** The end timers of threads without modules (see {@link SharedThreads.endLater}). */
  private readonly idleEnds = new Map<SharedThread, NodeJS.Timeout>();
  private closed = false;

  constructor(opts: SharedThreadsOptions = {}) {
    this.size = Math.max(1, Math.floor(opts.size ?? DEFAULT_SHARED_THREADS));
    this.limits = opts.resourceLimits ?? DEFAULT_SHARED_RESOURCE_LIMITS;
    this.onWarning = opts.onWarning ?? (() => {});
    this.idleEndMs = opts.idleEndMs ?? EXTRA_IDLE_MS;
  }

  /** Threads up or booting. */
  get count(): number {
    return this.threads.length;
  }

  /** Boots the first thread when there is none (the provider calls it at an image pull: a start usually follows). */
  warm(): void {
    if (!this.closed && this.threads.length === 0) this.boot();
  }

  /**
   * The thread a new module goes on (its module count already raised; the caller lowers it
   * when the module ends): the one with the fewest modules among those with room, else a new
   * one while fewer than `size` exist, else the one with the fewest modules among those on
   * time (see the file comment).
   */
  async take(): Promise<SharedThread> {
    if (this.closed) throw new Error('the shared threads are closed');
    const fewest = (ts: SharedThread[]) => ts.reduce((a, b) => (b.modules < a.modules ? b : a));
    const onTime = this.threads.filter((x) => x.lateMs() <= LATE_MS);
    const room = onTime.filter((x) => x.utilization() < FULL_UTILIZATION);
    let t: SharedThread;
    if (room.length > 0) t = fewest(room);
    else if (this.threads.length < this.size) t = this.boot();
    else t = fewest(onTime.length > 0 ? onTime : this.threads);
    t.modules++;
    this.keep(t);
    try {
      await t.ready;
    } catch (e) {
      t.modules--;
      throw e;
    }
    return t;
  }

  /** Every thread's load (thread id, modules, event-loop delay). */
  loads(): ThreadLoad[] {
    return this.threads.map((t) => ({ threadId: t.worker.threadId, containers: t.modules, eventLoopDelaySeconds: t.delaySeconds() }));
  }

  /** Terminates every thread (and so every module on them); later takes reject. */
  async close(): Promise<void> {
    this.closed = true;
    const all = this.threads.splice(0);
    for (const t of all) this.keep(t);
    await Promise.all(all.map((t) => t.worker.terminate()));
  }

  private boot(): SharedThread {
    const t = new SharedThread(
      this.limits,
      this.onWarning,
      (gone) => this.forget(gone),
      (empty) => this.endLater(empty),
    );
    this.threads.push(t);
    return t;
  }

  /** `t` holds no module: unless it is the only thread, it ends after `idleEndMs` without one. */
  private endLater(t: SharedThread): void {
    if (this.closed || t.gone || this.threads.length < 2 || this.idleEnds.has(t)) return;
    const timer = setTimeout(() => {
      this.idleEnds.delete(t);
      if (t.modules === 0 && !t.gone && this.threads.length > 1) void t.terminate(`an extra shared thread without modules for ${this.idleEndMs} ms`);
    }, this.idleEndMs);
    timer.unref();
    this.idleEnds.set(t, timer);
  }

  /** `t` does not end for want of modules (it got one, or it is gone). */
  private keep(t: SharedThread): void {
    clearTimeout(this.idleEnds.get(t));
    this.idleEnds.delete(t);
  }

  private forget(t: SharedThread): void {
    this.keep(t);
    const i = this.threads.indexOf(t);
    if (i >= 0) this.threads.splice(i, 1);
  }
}

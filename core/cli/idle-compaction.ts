/**
 * One memory-reducing garbage collection of the main thread's heap when nodelet is idle and its heap
 * grew since the last one (its start, a burst of pods), so that an idle node holds what it needs and
 * not what its last burst left committed. V8 itself collects as the heap fills, but a collection it
 * runs on its own keeps the pages it freed and the young generation's size; a "last resort"
 * collection (what V8 runs before it gives up on memory) compacts the old generation, shrinks the
 * young one and hands free pages back to the system. On an idle node after its start that is ~9 MiB
 * of RSS, for ~55 ms of the main thread once (bench/README.md, "Idle memory").
 *
 *   every checkMs:  event loop utilization over the period < idleUtilization
 *                   and the heap committed ≥ growthBytes over what the last collection left
 *                        │ yes: collect; what it leaves is the new base
 *                        ▼
 *   base (0 at start) ◄──┘        otherwise: nothing (a node never quite idle is never collected)
 *
 * Node has no API for such a collection; V8's `gc` function with `{ type: 'major', flavor:
 * 'last-resort' }` is it, compiled once in a context of its own with `--expose-gc` set for that
 * moment (no global of nodelet's contexts or its workers' gets it). Where that fails, there is no
 * idle compaction.
 */
import { performance as perf } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';

/** Options of {@link startIdleCompaction}; the defaults are nodelet's. */
export interface IdleCompactionOptions {
  /** How often the event loop's utilization is read (default 10 s). */
  readonly checkMs?: number;
  /** A period below this utilization is idle (default 0.02). */
  readonly idleUtilization?: number;
  /** Growth of the committed heap over the last collection's that is worth a collection (default 4 MiB). */
  readonly growthBytes?: number;
  /** Told after each collection: RSS before and after, and how long the thread was held. */
  readonly onCompacted?: (c: { rssBefore: number; rssAfter: number; ms: number }) => void;
}

/** The sources {@link IdleCompaction} reads and the collection it runs (replaced in tests). */
export interface IdleCompactionProbes {
  /** The event loop's utilization since the previous call (0..1). */
  utilization(): number;
  /** The bytes the thread's heap has committed. */
  heapBytes(): number;
  /** The process's resident set size in bytes (reported). */
  rss(): number;
  /** Runs the collection. */
  collect(): void;
}

/** The policy of the file comment: {@link IdleCompaction.tick} once per period. */
export class IdleCompaction {
  /** The committed heap the last collection left (0 before the first). */
  private base = 0;

  constructor(
    private readonly probes: IdleCompactionProbes,
    private readonly opts: IdleCompactionOptions = {},
  ) {}

  /** Reads one period; true when it ran a collection. */
  tick(): boolean {
    if (this.probes.utilization() >= (this.opts.idleUtilization ?? 0.02)) return false;
    if (this.probes.heapBytes() - this.base < (this.opts.growthBytes ?? 4 * 2 ** 20)) return false;
    const rssBefore = this.probes.rss();
    const t0 = perf.now();
    this.probes.collect();
    const ms = perf.now() - t0;
    this.base = this.probes.heapBytes();
    this.opts.onCompacted?.({ rssBefore, rssAfter: this.probes.rss(), ms });
    return true;
  }
}

/** V8's last-resort collection of this thread's heap, or undefined where it cannot be had (see the file comment). */
export function lastResortCollector(): (() => void) | undefined {
  try {
    v8.setFlagsFromString('--expose-gc');
    try {
      const gc = vm.runInNewContext('gc') as ((o: { type: string; flavor: string }) => void) | undefined;
      return typeof gc === 'function' ? () => gc({ type: 'major', flavor: 'last-resort' }) : undefined;
    } finally {
      v8.setFlagsFromString('--no-expose-gc');
    }
  } catch {
    return undefined;
  }
}

/** Starts the idle compaction of this process's main thread (an unref'd timer); returns its stop. */
export function startIdleCompaction(opts: IdleCompactionOptions = {}): () => void {
  const collect = lastResortCollector();
  if (!collect) return () => {};
  let last = perf.eventLoopUtilization();
  const policy = new IdleCompaction(
    {
      utilization() {
        const now = perf.eventLoopUtilization();
        const u = perf.eventLoopUtilization(now, last).utilization;
        last = now;
        return u;
      },
      heapBytes: () => v8.getHeapStatistics().total_heap_size,
      rss: () => process.memoryUsage.rss(),
      collect,
    },
    opts,
  );
  const timer = setInterval(() => policy.tick(), opts.checkMs ?? 10_000);
  timer.unref();
  return () => clearInterval(timer);
}

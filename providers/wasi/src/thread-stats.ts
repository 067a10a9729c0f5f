/**
 * What the wasi provider can measure of one running module (see README.md,
 * "Container stats"):
 *
 * - CPU: the kernel's accounting of the module's worker thread — the first
 *   field of `/proc/self/task/<tid>/schedstat` (ns on a CPU), else utime+stime
 *   of `/proc/self/task/<tid>/stat` (clock ticks, 100 Hz), else Node's
 *   `worker.cpuUsage()` where it exists (Node ≥ 24.6). The thread runs only
 *   this module (plus its WASI imports), so this is the container's CPU time.
 * - Memory: the module's linear memory size (`memory.buffer.byteLength`), as
 *   the worker last published it at a WASI call. It only grows (Wasm memory
 *   never shrinks), like a process's heap high-water mark.
 * - On a shared thread (BestEffort pods, shared-threads.ts) the thread's CPU
 *   is every module's: a module's CPU is the wall time of its run slices,
 *   published by the worker at each WASI call and suspension.
 */
import { readFileSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import type { ContainerStats } from '@nodelet/plugin-api/v1';
import { RESIZE_CONTROL_BYTES } from './worker/memory-limit.mjs';

/** Byte offset of the memory size in the control buffer (see worker/wasi-imports.mjs). */
export const MEMORY_SLOT_OFFSET = 8;
/** Byte offset of a shared-thread module's CPU time in ns (see worker/suspending-poll.mjs). */
export const CPU_SLOT_OFFSET = 16;
/**
 * Size of the control buffer: stop flag (Int32) + padding + memory size (Float64) + on a
 * shared thread, CPU ns of ended slices and the epoch ms the current slice began (2 Float64),
 * then a memory-limit request (worker/memory-limit.mjs: its sequence number, its bytes).
 */
export const CONTROL_BYTES = RESIZE_CONTROL_BYTES;

const TICK_NS = 1e9 / 100; // USER_HZ is 100 on Linux

/** CPU time of kernel thread `tid` of this process in ns, or undefined if it cannot be read. */
export function threadCpuNs(tid: number): number | undefined {
  try {
    const first = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0];
    const ns = Number(first);
    if (Number.isFinite(ns)) return ns;
  } catch {
    /* no schedstat (kernel without CONFIG_SCHED_INFO) */
  }
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // Fields after the parenthesised comm: state is field 3; utime/stime are 14/15.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(rest[11]) + Number(rest[12]);
    if (Number.isFinite(ticks)) return ticks * TICK_NS;
  } catch {
    /* not Linux, or the thread is gone */
  }
  return undefined;
}

/**
 * The stats of a module on a shared thread: CPU is the wall time of its run
 * slices (worker/suspending-poll.mjs sliceClock), memory as for a dedicated one.
 */
export function sharedModuleStats(control: SharedArrayBuffer): ContainerStats {
  const [ended, since] = new Float64Array(control, CPU_SLOT_OFFSET, 2);
  const cpuNs = ended! + (since ? Math.max(0, performance.timeOrigin + performance.now() - since) * 1e6 : 0);
  const memBytes = new Float64Array(control, MEMORY_SLOT_OFFSET, 1)[0]!;
  return {
    timestamp: new Date(),
    cpu: { usageCoreNanoSeconds: Math.round(cpuNs) },
    memory: { workingSetBytes: memBytes, usageBytes: memBytes },
  };
}

/** The stats of one module's worker (`tid` from its 'started' message). */
export function moduleStats(worker: Worker, tid: number | undefined, control: SharedArrayBuffer): ContainerStats {
  let cpuNs = tid === undefined ? undefined : threadCpuNs(tid);
  if (cpuNs === undefined) {
    const usage = (worker as unknown as { cpuUsage?: () => { user: number; system: number } }).cpuUsage?.();
    if (usage) cpuNs = (usage.user + usage.system) * 1000;
  }
  const memBytes = new Float64Array(control, MEMORY_SLOT_OFFSET, 1)[0]!;
  return {
    timestamp: new Date(),
    cpu: cpuNs === undefined ? undefined : { usageCoreNanoSeconds: Math.round(cpuNs) },
    memory: { workingSetBytes: memBytes, usageBytes: memBytes },
  };
}

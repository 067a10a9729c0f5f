/**
 * The descriptor budget of WASI containers. Every descriptor a module opens
 * (`path_open`) is a host descriptor of nodelet's own process, so the modules
 * of a node share nodelet's RLIMIT_NOFILE with its sockets (apiserver
 * watches, the kubelet API, plugin sockets) and log files. Each container gets
 * its own budget (EMFILE beyond it) and all containers together a node-wide
 * one (ENFILE beyond it) that leaves a reserve for nodelet itself. Enforced in
 * the worker (worker/wasi-imports.mjs `trackDescriptors`).
 */
import { readFileSync } from 'node:fs';
import type { FdBudget } from './worker-protocol.ts';

/**
 * Descriptors one container may hold by default: 1024, the soft RLIMIT_NOFILE
 * a Linux process starts with and what containerd 2.x gives containers
 * (soft 1024); far above what a WASI module needs (wasi-libc programs rarely
 * hold more than a few dozen) and small enough that many containers fit.
 */
export const DEFAULT_CONTAINER_MAX_FDS = 1024;

/**
 * The largest per-container budget accepted: the wrappers keep a little
 * bookkeeping per descriptor in the worker's JS heap (8 MiB by default), and
 * measured with the default heap: 8,192 descriptors are fine, 16,384 kill the
 * worker with "JS heap out of memory".
 */
export const MAX_CONTAINER_MAX_FDS = 8192;

/** The soft RLIMIT_NOFILE of this process (from /proc/self/limits), or undefined when unknown/unlimited. */
export function processFdLimit(limitsText?: string): number | undefined {
  let text = limitsText;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'utf8');
    } catch {
      return undefined;
    }
  }
  const m = /^Max open files\s+(\S+)/m.exec(text);
  if (!m || m[1] === 'unlimited') return undefined;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/**
 * Descriptors all WASI containers may hold together: the process limit minus
 * a reserve for nodelet of a quarter of it, at least 256 (20,000 → 15,000;
 * 1,024 → 768). At least 64. With no known limit, 64 Ki.
 */
export function defaultNodeMaxFds(processLimit = processFdLimit()): number {
  if (processLimit === undefined) return 65_536;
  return Math.max(64, processLimit - Math.max(256, Math.floor(processLimit / 4)));
}

/** A budget whose node-wide counter is shared by every worker of this provider. */
export function makeFdBudget(max = DEFAULT_CONTAINER_MAX_FDS, nodeMax = defaultNodeMaxFds()): FdBudget {
  if (!Number.isSafeInteger(max) || max < 1 || max > MAX_CONTAINER_MAX_FDS) {
    throw new RangeError(`the per-container descriptor budget must be an integer from 1 to ${MAX_CONTAINER_MAX_FDS}, not ${max}`);
  }
  if (!Number.isSafeInteger(nodeMax) || nodeMax < 1) throw new RangeError(`the node-wide descriptor budget must be a positive integer, not ${nodeMax}`);
  return { max, nodeMax, node: new SharedArrayBuffer(4) };
}

/** Descriptors the containers of `budget` hold now (for diagnostics and tests). */
export function fdsInUse(budget: FdBudget): number {
  return Atomics.load(new Int32Array(budget.node), 0);
}

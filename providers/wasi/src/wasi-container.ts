/**
 * A running WASI container as the provider holds it (a preview1 module or a
 * component), and how a worker's outcome becomes the container's exit: the
 * exit codes and the rule that makes a trap near the memory cap an OOM kill.
 */
import type { ContainerExit, ContainerLimits, ContainerResizeOutcome, ContainerStats, PodRef, RunningContainer } from '@nodelet/plugin-api/v1';
import type { StdinPipe } from './stdin-pipe.ts';

/** Exit code of a module that trapped: 128 + SIGABRT, what wasmtime's CLI returns on a trap. */
export const TRAP_EXIT_CODE = 134;
/** Exit code of a stopped (killed) or OOM-killed container: 128 + SIGKILL, as upstream reports. */
export const KILLED_EXIT_CODE = 137;

/** The requests a container serves itself (a wasi:http component served per request), for `/metrics`. */
export interface RequestsServed {
  /** Written by its worker (worker/http/request-metrics.mjs). */
  readonly metrics: SharedArrayBuffer;
  readonly pod: PodRef;
  readonly container: string;
}

/** A running module or component, with what the provider can measure of it. */
export interface WasiContainer extends RunningContainer {
  /** Set for a component that serves HTTP requests with an instance per request. */
  readonly requests?: RequestsServed;
  /** CPU time of its thread and its linear memory size (thread-stats.ts). */
  stats(): ContainerStats;
  /** Its stdin, when the spec has `stdin: true` (kubectl attach writes there). */
  readonly stdin?: StdinPipe;
  /** Changes its limits while it runs (a preview1 module: module-run.ts); absent when it cannot (components). */
  resize?(limits: ContainerLimits): Promise<ContainerResizeOutcome>;
}

/**
 * A trap counts as an OOM kill when the module's memory was within this much
 * of its cap: allocators trap (abort) when `memory.grow` fails, and the failed
 * request may have been up to this large.
 */
export function oomHeadroom(capBytes: number): number {
  return Math.max(1 << 20, Math.floor(capBytes / 4));
}

/**
 * The exit of a container whose module trapped with `memoryBytes` of linear
 * memory: OOMKilled (137) when that was within {@link oomHeadroom} of the cap,
 * else the trap (134, its message).
 */
export function trapExit(message: string, memoryBytes: number, capBytes: number | undefined): Omit<ContainerExit, 'finishedAt'> {
  if (capBytes !== undefined && memoryBytes + oomHeadroom(capBytes) > capBytes) {
    return { exitCode: KILLED_EXIT_CODE, reason: 'OOMKilled', message: `memory limit of ${capBytes} bytes reached (${message})` };
  }
  return { exitCode: TRAP_EXIT_CODE, reason: 'Error', message };
}

/** The exit of a container whose module returned or exited with `code`. */
export function codeExit(code: number): Omit<ContainerExit, 'finishedAt'> {
  return { exitCode: code, reason: code === 0 ? 'Completed' : 'Error' };
}

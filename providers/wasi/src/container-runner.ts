/**
 * Runs one container: a worker thread (taken from the pool, used for this
 * container only) executing a compiled WASI module — or, for a BestEffort pod
 * when the runner has shared threads ({@link RunnerOptions.sharedThreads}), a
 * module among others on a shared thread (shared-threads.ts), where its clock
 * sleeps suspend instead of holding the thread. On a shared thread the module's
 * end is its 'done' message, and terminate() ends the whole thread (every
 * module on it: see shared-threads.ts for that policy).
 *
 *   startContainer ──take()──► starting ──'started'──► running ──'exit'/'trap'──► exited
 *                          │                      │
 *                          │'failed'/error        │ stop(): control[0]=1, notify
 *                          │start timeout/abort   │
 *                          │ (terminate())        │
 *                          ▼                      ▼
 *                      (rejects)               stopping ──unwinds at next WASI call──► exited (137)
 *                                                 │ still running after STOP_UNWIND_MS
 *                                                 ▼ worker.terminate()  ─────────────► exited (137)
 *
 * `exit` resolves once the worker thread is gone, with the first outcome the
 * worker reported, or 137 if it was terminated before reporting one. Once
 * stopping, the worker reports no outcome of its own (a module that returns or
 * exits after the stop flag is set was killed, as by SIGKILL): a stop always
 * ends in 137 unless the module had already ended before it.
 */
import { channel } from 'node:diagnostics_channel';
import type { Worker } from 'node:worker_threads';
import {
  providerError,
  type ContainerExit,
  type ContainerSpec,
  type ContainerStats,
  type EventRecorder,
  type Logger,
  type RunningContainer,
} from '@nodelet/plugin-api/v1';
import type { MemoryDecl } from './memory-cap.ts';
import type { LoadedModule } from './module-cache.ts';
import type { WorkerPool } from './worker-pool.ts';
import { CONTROL_BYTES, moduleStats, sharedModuleStats } from './thread-stats.ts';
import type { SharedThread, SharedThreads } from './shared-threads.ts';
import { experimentalHttpConfig, type ExperimentalHttpConfig } from './experimental-http-config.ts';
import { StdinPipe } from './stdin-pipe.ts';

/** Exit code of a module that trapped: 128 + SIGABRT, what wasmtime's CLI returns on a trap. */
export const TRAP_EXIT_CODE = 134;
/** Exit code of a stopped (killed) or OOM-killed container: 128 + SIGKILL, as upstream reports. */
export const KILLED_EXIT_CODE = 137;

/**
 * A trap counts as an OOM kill when the module's memory was within this much
 * of its cap: allocators trap (abort) when `memory.grow` fails, and the failed
 * request may have been up to this large.
 */
export function oomHeadroom(capBytes: number): number {
  return Math.max(1 << 20, Math.floor(capBytes / 4));
}

/**
 * How long a stopped module gets to unwind by itself before its worker is
 * terminated. Unwinding closes its WASI descriptors; termination leaks them
 * (uvwasi does not close them), so only modules stuck in pure computation are
 * terminated.
 */
export const STOP_UNWIND_MS = 250;

/**
 * Diagnostics channel (`node:diagnostics_channel`) on which every container
 * start is published once its module runs, as a {@link ContainerStartEvent}.
 * Nothing is built when nobody subscribes.
 */
export const CONTAINER_START_CHANNEL = 'nodelet:wasi:container-start';

/** Published on {@link CONTAINER_START_CHANNEL}. */
export interface ContainerStartEvent {
  readonly containerId: string;
  readonly logPath: string;
  /** The worker thread's id (one per container). */
  readonly threadId: number;
  /** Waiting for a worker (0 when an idle one was taken). */
  readonly waitMs: number;
  /** From asking for a worker to the module about to run (cached module: no compile). */
  readonly startMs: number;
}

/** Channel on which every container end is published, as a {@link ContainerEndEvent}. */
export const CONTAINER_END_CHANNEL = 'nodelet:wasi:container-end';

/** Published on {@link CONTAINER_END_CHANNEL} once the container's worker thread is gone. */
export interface ContainerEndEvent {
  readonly containerId: string;
  readonly logPath: string;
  /** From the module's start to the thread's end (undefined if it never started). */
  readonly runMs?: number;
  readonly exit: ContainerExit;
}

const startChannel = channel(CONTAINER_START_CHANNEL);
const endChannel = channel(CONTAINER_END_CHANNEL);

/**
 * How long a module may take to instantiate (default): its `(start)` function
 * runs inside instantiation, before `_start`, so a module looping there would
 * otherwise stay ContainerCreating forever with a thread at 100 %. A start
 * function doing real initialisation (AssemblyScript puts top-level code
 * there) takes milliseconds; upstream's CRI calls get 2 minutes
 * (--runtime-request-timeout), far more than a start should need on a node
 * with two cores to share.
 */
export const DEFAULT_START_TIMEOUT_MS = 10_000;

/** The descriptor budget of each container (see wasi-imports.mjs trackDescriptors). */
export interface FdBudget {
  /** Descriptors one container may hold (preopens included): EMFILE beyond. */
  readonly max: number;
  /** Descriptors all containers of the node may hold together: ENFILE beyond. */
  readonly nodeMax: number;
  /** Int32Array[1] shared by every worker: the descriptors all containers hold. */
  readonly node: SharedArrayBuffer;
}

/** The run message a worker gets (see worker/wasi-worker.mjs). */
export interface WorkerInput {
  readonly type: 'run';
  readonly module: WebAssembly.Module;
  readonly importedMemories: readonly MemoryDecl[];
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly mounts: ReadonlyArray<{ name: string; containerPath: string; hostPath: string; readOnly: boolean }>;
  readonly logPath: string;
  readonly logOptions: { maxBytes?: number; maxFiles?: number };
  /** {@link CONTROL_BYTES}: Int32 [0] = stop requested; Float64 at byte 8 = linear memory size (thread-stats.ts). */
  readonly control: SharedArrayBuffer;
  /** No budget when absent. */
  readonly fdBudget?: FdBudget;
  /**
   * TCP listeners to pre-open, in order, as descriptors after the preopened
   * directories (see {@link listenAddresses}); the module then runs with JSPI.
   */
  readonly listen?: ReadonlyArray<{ host: string; port: number }>;
  /** Set for a module importing `wasi_experimental_http` (then run with JSPI). */
  readonly http?: ExperimentalHttpConfig;
  /** The container's stdin FIFO (`stdin: true`, see stdin-pipe.ts); /dev/null when absent. */
  readonly stdinPath?: string;
  /**
   * On a shared thread: the module's id there ({@link SharedThread.attach}); its messages come
   * back over the thread's port as `{ moduleId, message }`, then `{ type: 'done' }` once it ended.
   */
  readonly moduleId?: number;
}

/** Where pre-opened sockets listen when the pod has no IP (no pod network on the node). */
export const FALLBACK_LISTEN_HOST = '127.0.0.1';

/**
 * The listeners a container gets: one per declared TCP `containerPort`, on the
 * pod's primary IP ({@link FALLBACK_LISTEN_HOST} when it has none), only when
 * the module imports `sock_accept` (a module that cannot accept would leave
 * clients hanging on an open port). UDP and SCTP ports get none.
 */
export function listenAddresses(spec: ContainerSpec, loaded: Pick<LoadedModule, 'acceptsSockets'>): Array<{ host: string; port: number }> {
  if (!loaded.acceptsSockets) return [];
  const host = spec.network?.podIPs[0] ?? FALLBACK_LISTEN_HOST;
  return (spec.ports ?? []).filter((p) => p.protocol === 'TCP').map((p) => ({ host, port: p.containerPort }));
}

/** Tunables of the container runs. */
export interface RunnerOptions {
  /** Log rotation of the container's log file. */
  readonly logOptions?: { maxBytes?: number; maxFiles?: number };
  /** Instantiation timeout (default {@link DEFAULT_START_TIMEOUT_MS}). */
  readonly startTimeoutMs?: number;
  /** Descriptor budget of each container (none when absent). */
  readonly fdBudget?: FdBudget;
  /**
   * Threads shared by BestEffort pods' modules: when set, a container whose
   * pod is BestEffort ({@link placement}) runs on one of them instead of a
   * thread of its own.
   */
  readonly sharedThreads?: SharedThreads;
}

/**
 * Where a module runs: `shared` (a shared thread) for a BestEffort pod's
 * module that needs no listener, outbound HTTP or stdin and has no start section (those keep a
 * thread of their own), `dedicated` (a thread of its own) otherwise — a pod with a CPU or
 * memory request (Guaranteed, Burstable), or whose QoS class is not known.
 */
export function placement(spec: ContainerSpec, loaded: Pick<LoadedModule, 'acceptsSockets' | 'experimentalHttp' | 'startFunction'>): 'shared' | 'dedicated' {
  if (spec.qosClass !== 'BestEffort') return 'dedicated';
  // A module reading its attach stdin blocks its thread in read(): never on a shared one.
  if (spec.stdin) return 'dedicated';
  if (loaded.experimentalHttp || listenAddresses(spec, loaded).length > 0) return 'dedicated';
  // A start section runs inside instantiation, where nothing can suspend: one that loops would hold
  // the shared thread until the start timeout terminates it with its neighbours.
  if (loaded.startFunction) return 'dedicated';
  return 'shared';
}

/** The thread a module runs on, as the runner drives it (a worker of its own or a shared thread). */
interface Host {
  readonly threadId: number;
  onMessage(fn: (m: WorkerMessage) => void): void;
  onError(fn: (e: Error) => void): void;
  /** Once: the module is gone (its thread ended, or its 'done' on a shared thread); `why` if its shared thread was ended for another reason. */
  onGone(fn: (code: number, why?: string) => void): void;
  post(input: WorkerInput): void;
  terminate(why: string): void;
  /** The module's stats. */
  stats(tid: number | undefined, control: SharedArrayBuffer): ContainerStats;
}

function dedicatedHost(worker: Worker): Host {
  return {
    threadId: worker.threadId,
    onMessage: (fn) => worker.on('message', fn),
    onError: (fn) => worker.on('error', fn),
    onGone: (fn) => worker.on('exit', (code) => fn(code)),
    post: (input) => worker.postMessage(input),
    terminate: () => void worker.terminate(),
    stats: (tid, control) => moduleStats(worker, tid, control),
  };
}

function sharedHost(thread: SharedThread): Host {
  let gone: ((code: number, why?: string) => void) | undefined;
  let ended = false;
  let onMessage: (m: WorkerMessage) => void = () => {};
  let unsubscribe = () => {};
  // The module's messages come over the thread's own port, tagged with its id (no MessageChannel
  // per module: making one and moving its port to the thread was ~5 % of the main thread's time
  // in a 100-pod burst, bench/results/, "Where a burst's tail goes").
  const id = thread.attach((m: WorkerMessage | { type: 'done' }) => {
    if (m.type === 'done') end(0);
    else onMessage(m);
  });
  const end = (code: number, why?: string) => {
    if (ended) return;
    ended = true;
    unsubscribe();
    thread.modules--;
    thread.detach(id);
    gone?.(code, why);
  };
  unsubscribe = thread.onGone(() => end(1, thread.goneBecause));
  return {
    threadId: thread.worker.threadId,
    onMessage: (fn) => {
      onMessage = fn;
    },
    onError: () => {},
    onGone: (fn) => {
      gone = fn;
    },
    post: (input) => thread.worker.postMessage({ ...input, moduleId: id }),
    terminate: (why) => thread.terminate(why),
    stats: (_tid, control) => sharedModuleStats(control),
  };
}

type WorkerMessage =
  | { type: 'ready' }
  | { type: 'started'; tid?: number }
  | { type: 'exit'; code: number }
  | { type: 'trap'; message: string; memoryBytes: number }
  | { type: 'instantiating' }
  | { type: 'failed'; message: string; reason?: 'mount' | 'wasi' | 'port' }
  | { type: 'warning'; message: string; reason?: string };

/**
 * Starts `spec` with the compiled module in a worker of `pool`. Resolves once
 * the module is instantiated and about to run; rejects (branded error) if it
 * could not be instantiated, did not instantiate within the start timeout, or
 * no worker could be started. Aborting `signal` (the pod is being deleted)
 * during the start terminates the worker and rejects. Warnings with a reason
 * (e.g. `VolumeReplaced`) also become Warning events through `events`.
 */
/** A running module, with what the provider can measure of it. */
export interface WasiContainer extends RunningContainer {
  /** CPU time of its thread and its linear memory size (thread-stats.ts). */
  stats(): ContainerStats;
  /** Its stdin, when the spec has `stdin: true` (kubectl attach writes there). */
  readonly stdin?: StdinPipe;
}

export async function runContainer(
  spec: ContainerSpec,
  loaded: LoadedModule,
  log: Logger,
  pool: WorkerPool,
  opts: RunnerOptions = {},
  signal?: AbortSignal,
  events?: EventRecorder,
): Promise<WasiContainer> {
  signal?.throwIfAborted();
  const http = loaded.experimentalHttp ? experimentalHttpConfig(spec) : undefined;
  const t0 = performance.now();
  let worker: Host;
  const shared = opts.sharedThreads !== undefined && placement(spec, loaded) === 'shared';
  try {
    worker = shared ? sharedHost(await opts.sharedThreads!.take()) : dedicatedHost(await pool.take());
  } catch (e) {
    throw providerError('Internal', `no worker thread for container ${spec.name}: ${(e as Error).message}`, { cause: e });
  }
  const onSharedThread = shared ? ` (on a thread shared with other BestEffort pods, which was terminated)` : '';
  const waitMs = performance.now() - t0;
  const control = new SharedArrayBuffer(CONTROL_BYTES);
  let stdin: StdinPipe | undefined;
  try {
    stdin = spec.stdin ? await StdinPipe.create() : undefined;
  } catch (e) {
    worker.terminate('no stdin');
    throw providerError('Internal', `cannot make the stdin of container ${spec.name}: ${(e as Error).message}`, { cause: e });
  }
  const input: WorkerInput = {
    type: 'run',
    module: loaded.module,
    importedMemories: loaded.importedMemories,
    argv: spec.argv,
    env: spec.env,
    mounts: spec.mounts.map((m) => ({ name: m.name, containerPath: m.containerPath, hostPath: m.hostPath, readOnly: m.readOnly })),
    logPath: spec.logPath,
    logOptions: opts.logOptions ?? {},
    control,
    fdBudget: opts.fdBudget,
    listen: listenAddresses(spec, loaded),
    http,
    stdinPath: stdin?.path,
  };
  let outcome: Omit<ContainerExit, 'finishedAt'> | undefined;
  let stopping = false;
  let startedAt: Date | undefined;
  let startedMs: number | undefined;
  let tid: number | undefined;

  return new Promise<WasiContainer>((resolveStart, rejectStart) => {
    let resolveExit!: (e: ContainerExit) => void;
    const exit = new Promise<ContainerExit>((r) => {
      resolveExit = r;
    });
    const running: WasiContainer = {
      id: spec.id,
      stats: () => worker.stats(tid, control),
      get startedAt() {
        return startedAt ?? new Date();
      },
      exit,
      stdin,
      async stop(_gracePeriodMs: number) {
        // WASI has no signals, so there is nothing polite to ask the module and the grace
        // period is not used. The flag makes the module unwind at its next WASI call (or
        // wake from its sleep) and close its descriptors; a module computing without
        // calling WASI is terminated after STOP_UNWIND_MS.
        if (!stopping) {
          stopping = true;
          // The flag first, then stdin: a module blocked reading stdin wakes on end of input
          // only after the stop is visible to its thread, so it cannot take that end of input
          // for a normal one and exit 0 by itself — the kill wins, as SIGKILL does (137).
          const flag = new Int32Array(control);
          Atomics.store(flag, 0, 1);
          Atomics.notify(flag, 0);
          stdin?.close(); // a module blocked reading stdin reads end of input
          const timer = setTimeout(
            () =>
              worker.terminate(
                `container ${spec.name} of pod ${spec.pod.namespace}/${spec.pod.name} on the same shared thread did not stop within ${STOP_UNWIND_MS} ms (busy without WASI calls); the thread was terminated`,
              ),
            STOP_UNWIND_MS,
          );
          void exit.then(() => clearTimeout(timer));
        }
        await exit;
      },
    };
    // Bounding the start: a module looping in its start function never answers.
    const startTimeoutMs = opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
    let instantiating = false;
    const abortStart = (err: Error, stuck = true) => {
      if (startedAt !== undefined) return;
      stopping = true;
      cleanupStart();
      rejectStart(err);
      if (shared && !stuck) {
        // Not stuck, just no longer wanted: the module unwinds at its first WASI call, its neighbours go on.
        const flag = new Int32Array(control);
        Atomics.store(flag, 0, 1);
        Atomics.notify(flag, 0);
        // A module that never calls WASI would run on unseen: bound it like a start.
        const late = setTimeout(
          () =>
            worker.terminate(
              `container ${spec.name} of pod ${spec.pod.namespace}/${spec.pod.name} on the same shared thread was not started (its pod was deleted) and did not stop within ${startTimeoutMs / 1000}s; the thread was terminated`,
            ),
          startTimeoutMs,
        );
        void exit.then(() => clearTimeout(late));
        return;
      }
      worker.terminate(
        `container ${spec.name} of pod ${spec.pod.namespace}/${spec.pod.name} on the same shared thread did not finish starting; the thread was terminated`,
      );
    };
    const timer = setTimeout(
      () =>
        abortStart(
          providerError(
            'InvalidImage',
            instantiating
              ? `the module of image ${spec.image.image} did not finish instantiating within ${startTimeoutMs / 1000}s: its start function (run before _start) does not return; its thread was terminated${onSharedThread}`
              : `the worker of container ${spec.name} did not start the module within ${startTimeoutMs / 1000}s; its thread was terminated${onSharedThread}`,
            { reason: 'StartTimeout' },
          ),
        ),
      startTimeoutMs,
    );
    const onAbort = () =>
      abortStart(providerError('Unavailable', `container ${spec.name} was not started: the pod is being deleted (its module was still instantiating)`), false);
    function cleanupStart() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    worker.onMessage((m: WorkerMessage) => {
      switch (m.type) {
        case 'instantiating':
          instantiating = true;
          break;
        case 'started':
          cleanupStart();
          if (stopping) break; // given up on already: the worker is being terminated
          tid = m.tid;
          startedAt = new Date();
          startedMs = performance.now();
          resolveStart(running);
          if (!shared) setImmediate(() => pool.warm()); // replace the worker once the caller has its container
          if (startChannel.hasSubscribers) {
            startChannel.publish({
              containerId: spec.id,
              logPath: spec.logPath,
              threadId: worker.threadId,
              waitMs,
              startMs: startedMs - t0,
            } satisfies ContainerStartEvent);
          }
          break;
        case 'ready':
          break;
        case 'failed':
          cleanupStart();
          rejectStart(
            m.reason === 'mount' || m.reason === 'port'
              ? providerError('InvalidArgument', `container ${spec.name}: ${m.message}`, m.reason === 'port' ? { reason: 'CannotListen' } : {})
              : providerError('InvalidImage', `cannot instantiate the module of image ${spec.image.image}: ${m.message}`),
          );
          break;
        case 'warning':
          log.warn({ container: spec.name }, m.message);
          if (m.reason !== undefined) events?.('Warning', m.reason, `container ${spec.name}: ${m.message}`);
          break;
        default:
          outcome ??= toExit(m, loaded.capBytes);
      }
    });
    worker.onError((e) => {
      if (startedAt === undefined) {
        cleanupStart();
        rejectStart(providerError('Internal', `the worker of container ${spec.name} failed to start: ${e.message}`, { cause: e }));
      } else {
        outcome ??= { exitCode: 1, reason: 'Error', message: `${e.name}: ${e.message}` };
      }
    });
    worker.onGone((code, why) => {
      cleanupStart();
      if (startedAt === undefined) {
        rejectStart(providerError('Internal', `the worker of container ${spec.name} exited before the module started (code ${code})`));
        if (!shared) setImmediate(() => pool.warm());
      }
      const result: ContainerExit = {
        ...(outcome ??
          (stopping
            ? { exitCode: KILLED_EXIT_CODE, reason: 'Error' }
            : why !== undefined
              ? { exitCode: KILLED_EXIT_CODE, reason: 'Error', message: why }
              : { exitCode: 1, reason: 'Error', message: `the worker thread ended unexpectedly (code ${code})` })),
        finishedAt: new Date(),
      };
      stdin?.close();
      resolveExit(result);
      if (endChannel.hasSubscribers) {
        const runMs = startedMs === undefined ? undefined : performance.now() - startedMs;
        endChannel.publish({ containerId: spec.id, logPath: spec.logPath, runMs, exit: result } satisfies ContainerEndEvent);
      }
    });
    worker.post(input);
  });
}

function toExit(m: Extract<WorkerMessage, { type: 'exit' | 'trap' }>, capBytes: number | undefined): Omit<ContainerExit, 'finishedAt'> {
  if (m.type === 'exit') return { exitCode: m.code, reason: m.code === 0 ? 'Completed' : 'Error' };
  if (capBytes !== undefined && m.memoryBytes + oomHeadroom(capBytes) > capBytes) {
    return { exitCode: KILLED_EXIT_CODE, reason: 'OOMKilled', message: `memory limit of ${capBytes} bytes reached (${m.message})` };
  }
  return { exitCode: TRAP_EXIT_CODE, reason: 'Error', message: m.message };
}

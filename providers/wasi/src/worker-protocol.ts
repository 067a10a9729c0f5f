/**
 * The messages between the provider (main thread) and its worker threads: one
 * definition for both sides. The TypeScript side imports these types; the
 * workers (plain JavaScript under worker/, so a thread starts without a
 * TypeScript loader) import them with JSDoc `@import` and are type-checked
 * against them (`checkJs`). Types, and the worker options the main thread starts them with.
 *
 * Three kinds of worker:
 *
 *  - worker/wasi-worker.mjs runs WASI preview1 modules. Started with
 *    {@link WasiWorkerData}; gets {@link ToWasiWorker} messages; answers with
 *    {@link ModuleMessage}s. A dedicated thread (worker-pool.ts) runs one
 *    module; a shared thread (shared-threads.ts) runs many, and tags each
 *    module's messages with its id ({@link SharedThreadMessage}).
 *
 *        pool/thread ──'ping'──► worker ──'ready'──► (idle)
 *        runner ──'run'──► worker ──'instantiating'──► 'started' ──► 'exit' | 'trap'
 *                                   └──'failed' (before 'started')
 *        (control buffer: a memory-limit request) ──► 'resized' (while it runs)
 *        'warning' at any time; on a shared thread 'done' once the module was cleaned up
 *
 *  - worker/component-worker.mjs runs one WASI 0.2 component: started with
 *    {@link ComponentWorkerData}, answers with {@link ComponentMessage}s.
 *  - worker/http-worker.mjs serves one wasi:http component with an instance per
 *    request: started with {@link HttpWorkerData}, answers with the
 *    {@link ComponentMessage}s `started`, `failed` and `warning` (a request's
 *    trap ends that request, not the container).
 *  - worker/transpile-worker.mjs transpiles one component with jco: started
 *    with {@link TranspileWorkerData}, answers once with a {@link TranspileReply}.
 */
import type { MessagePort, WorkerOptions } from 'node:worker_threads';
import type { ServiceProtocol, ServiceRoute } from '@nodelet/plugin-api/v1';
import type { ExperimentalHttpConfig } from './experimental-http-config.ts';
import type { MemoryDecl } from './memory-cap.ts';
import type { PlatformConfig } from './platform/platform-config.ts';
import type { OutboundPolicy } from './outbound-hosts.mjs';

/** Log rotation of a container's CRI log file (CriLogWriter's options). */
export interface LogRotation {
  readonly maxBytes?: number;
  readonly maxFiles?: number;
}

/** A volume mount as a worker sees it: a preopen of `hostPath` at `containerPath`. */
export interface WorkerMount {
  readonly name: string;
  readonly containerPath: string;
  readonly hostPath: string;
  readonly readOnly: boolean;
}

/** The descriptor budget of each container (see worker/wasi-imports.mjs trackDescriptors). */
export interface FdBudget {
  /** Descriptors one container may hold (preopens included): EMFILE beyond. */
  readonly max: number;
  /** Descriptors all containers of the node may hold together: ENFILE beyond. */
  readonly nodeMax: number;
  /** Int32Array[1] shared by every worker: the descriptors all containers hold. */
  readonly node: SharedArrayBuffer;
}

/** A TCP address to listen on. */
export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

/** What every container run gets, module or component: its command line, environment, volumes and log. */
export interface ContainerRunInput {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly mounts: readonly WorkerMount[];
  readonly logPath: string;
  readonly logOptions: LogRotation;
}

// ---- outbound routes (worker/service-route.mjs ↔ services-channel.ts) ----

/**
 * A worker's question on its container's route port: where a TCP connection to `host:port`
 * goes. With `reply`, the asker blocks: the answer is written there (worker/service-route.mjs
 * `answerSync`) instead of sent back as a {@link RouteReply}.
 */
export interface RouteAsk {
  readonly id: number;
  readonly host: string;
  readonly port: number;
  readonly reply?: SharedArrayBuffer;
  /** The Service port's protocol (TCP when absent). */
  readonly protocol?: ServiceProtocol;
}

/** The Service resolver's route, or why there is none (`error`: the request fails with the message). */
export type WorkerRoute = ServiceRoute | { readonly kind: 'error'; readonly message: string };

/** The answer to a {@link RouteAsk} without `reply`. */
export interface RouteReply {
  readonly id: number;
  readonly route: WorkerRoute;
}

// ---- preview1 worker (worker/wasi-worker.mjs) ----

/** `workerData` of a preview1 worker. */
export interface WasiWorkerData {
  /** URL of plugin-api's CRI log writer module (loaded by URL: no TypeScript loader in the thread). */
  readonly criLogUrl: string;
  /** A shared thread: runs many modules at once, each with JSPI. */
  readonly shared?: boolean;
  /** Shared threads: Float64 [0] epoch ms of the last beat, [1] the largest lag of a beat (reset by the main thread). */
  readonly heartbeat?: SharedArrayBuffer;
}

/** Sent once when the worker is created; answered with `ready` once it is up. */
export interface PingMessage {
  readonly type: 'ping';
}

/** The run message: the module to run and everything it runs with. */
export interface RunMessage extends ContainerRunInput {
  readonly type: 'run';
  readonly module: WebAssembly.Module;
  readonly importedMemories: readonly MemoryDecl[];
  /**
   * CONTROL_BYTES (thread-stats.ts): Int32 [0] = stop requested; Float64 at byte 8 = linear memory size; shared threads: slice
   * clock after it; then a memory-limit request (worker/memory-limit.mjs: Int32 [8] its sequence number, Float64 at byte 48 its bytes).
   */
  readonly control: SharedArrayBuffer;
  /** The memory limit the module starts with, in bytes (none when absent): a lower limit asked for later must be above what it holds. */
  readonly memoryLimitBytes?: number;
  /** No budget when absent. */
  readonly fdBudget?: FdBudget;
  /** TCP listeners to pre-open, in order, as descriptors after the preopened directories; the module then runs with JSPI. */
  readonly listen?: readonly ListenAddress[];
  /** Set for a module importing `wasi_experimental_http` (then run with JSPI). */
  readonly http?: ExperimentalHttpConfig;
  /** With `http`, in cluster mode: where its requests connect (Services; worker/service-route.mjs). Transferred. */
  readonly routes?: MessagePort;
  /** The container's stdin FIFO (`stdin: true`, see stdin-pipe.ts); /dev/null when absent. */
  readonly stdinPath?: string;
  /** On a shared thread: the module's id there; its messages come back as {@link SharedThreadMessage}. */
  readonly moduleId?: number;
}

/** What the main thread sends a preview1 worker. */
export type ToWasiWorker = PingMessage | RunMessage;

/** Why a module could not start: a mount that is not the directory named, a port that cannot be listened on, anything else. */
export type FailedReason = 'mount' | 'port' | 'wasi';

/** What a preview1 worker reports about its module (or, `ready`/`warning`, about itself). */
export type ModuleMessage =
  /** Answer to `ping`: waiting for the run message. */
  | { readonly type: 'ready' }
  /** About to instantiate (the module's start section runs inside). */
  | { readonly type: 'instantiating' }
  /** Instantiated, `_start` about to run; `tid` the kernel thread id (dedicated threads). */
  | { readonly type: 'started'; readonly tid?: number }
  /** `_start` returned or `proc_exit(code)`. */
  | { readonly type: 'exit'; readonly code: number }
  /** The module trapped or threw; `memoryBytes` its linear memory then (an OOM kill when near the cap). */
  | { readonly type: 'trap'; readonly message: string; readonly memoryBytes: number }
  /**
   * Answer to memory-limit request `seq` (worker/memory-limit.mjs): `applied`, `below-usage` (a lower limit than the
   * `memoryBytes` the module holds: unchanged) or `unsupported` (the module was not rewritten for it).
   */
  | { readonly type: 'resized'; readonly seq: number; readonly outcome: 'applied' | 'below-usage' | 'unsupported'; readonly memoryBytes: number }
  /** Could not start (before `started`). */
  | { readonly type: 'failed'; readonly message: string; readonly reason?: FailedReason }
  /** Worth a log line; with a reason also a Warning event on the pod (e.g. `VolumeReplaced`). */
  | { readonly type: 'warning'; readonly message: string; readonly reason?: string };

/** On a shared thread: the module ended and its descriptors and log are closed. */
export interface DoneMessage {
  readonly type: 'done';
  /** The size of the module's linear memory when it ended (bytes). */
  readonly memoryBytes?: number;
}

/** What a shared thread posts: its own `ready`/`warning`, or one module's message tagged with its id. */
export type SharedThreadMessage = ModuleMessage | { readonly moduleId: number; readonly message: ModuleMessage | DoneMessage };

// ---- component worker (worker/component-worker.mjs) ----

/** `workerData` of a component worker. */
export interface ComponentWorkerData extends ContainerRunInput {
  /** The transpiled component's directory (component.js and its core modules). */
  readonly dir: string;
  /** The component's core modules (`component.core*.wasm`), compiled with their memories capped. */
  readonly modules: Readonly<Record<string, WebAssembly.Module>>;
  readonly world: 'cli' | 'http';
  readonly criLogUrl: string;
  /** http world: where to serve. */
  readonly listen?: ListenAddress;
  /** In cluster mode: where outgoing requests connect (Services; worker/service-route.mjs). Transferred. */
  readonly routes?: MessagePort;
  /** What wasi:keyvalue's stores are (platform/platform-config.ts); wasi:config reads `env`. */
  readonly platform: PlatformConfig;
  /** The component's imports, with their versions (the platform interfaces' drafts differ by version). */
  readonly imports: readonly string[];
  /** The pod's outbound allow-list (outbound-config.ts); everything is allowed without it. */
  readonly outbound?: OutboundPolicy;
  /** How the component's wasi:sockets are confined (worker/component-sockets.mjs). */
  readonly sockets: SocketConfinement;
}

/** Where a component's sockets may bind, and the descriptors they may take. */
export interface SocketConfinement {
  /** The pod's primary IP (127.0.0.1 without one): the one address a socket binds to. */
  readonly bindHost: string;
  /** The declared `containerPort`s by protocol: a bind takes one of them, or port 0 (any free port). */
  readonly tcpPorts: readonly number[];
  readonly udpPorts: readonly number[];
  /** Each socket counts against the container's and the node's descriptor budgets. */
  readonly fdBudget?: FdBudget;
}

/** What a component worker reports. */
export type ComponentMessage =
  /** cli: `run()` about to be called; http: listening. */
  | { readonly type: 'started' }
  /** cli: `run()` returned (0, or 1 for its error result). */
  | { readonly type: 'exit'; readonly code: number }
  /** The component trapped or threw. */
  | { readonly type: 'trap'; readonly message: string; readonly memoryBytes?: number }
  /** Could not start; `PortInUse`/`Listen` for the http port, `mount` for a mount that is not the directory named. */
  | { readonly type: 'failed'; readonly message: string; readonly reason?: 'PortInUse' | 'Listen' | 'mount' }
  /** Worth a log line; with a reason also a Warning event. */
  | { readonly type: 'warning'; readonly message: string; readonly reason?: string };

// ---- per-request http worker (worker/http-worker.mjs) ----

/** `workerData` of a worker serving a wasi:http component with an instance per request. */
export interface HttpWorkerData extends ContainerRunInput {
  /** The component's core module holding its code, compiled for reset (global-exports.ts, stack-tracking.ts). */
  readonly module: WebAssembly.Module;
  /** Its export `wasi:http/incoming-handler@0.2.x#handle`. */
  readonly handleExport: string;
  readonly criLogUrl: string;
  readonly listen: ListenAddress;
  /** The container's request metrics (worker/http/request-metrics.mjs), written by the worker. */
  readonly metrics: SharedArrayBuffer;
  /** Instances kept ready, and at most at once (requests beyond wait in a queue, then get 503). */
  readonly bounds: { readonly warm: number; readonly max: number };
  /** Per-request timeout in ms; none when unset. */
  readonly requestTimeoutMs?: number;
  /** With a memory limit: a request that traps with its instance's memory above this ran out of memory. */
  readonly oomAboveBytes?: number;
  /** In cluster mode: where outgoing requests connect (Services; worker/service-route.mjs). Transferred. */
  readonly routes?: MessagePort;
  /** What wasi:keyvalue's stores are (platform/platform-config.ts); wasi:config reads `env`. */
  readonly platform: PlatformConfig;
  /** The pod's outbound allow-list (outbound-config.ts); everything is allowed without it. */
  readonly outbound?: OutboundPolicy;
}

// ---- transpile worker (worker/transpile-worker.mjs) ----

/**
 * How the component and transpile workers are started: no flags, arguments or environment of
 * nodelet's, no stdin, and their stdout/stderr piped to nodelet (which drains and drops them: a
 * component's output goes to its CRI log by the worker itself).
 */
export function plainWorker(): Pick<WorkerOptions, 'execArgv' | 'argv' | 'env' | 'stdin' | 'stdout' | 'stderr'> {
  return { execArgv: [], argv: [], env: {}, stdin: false, stdout: true, stderr: true };
}

/** `workerData` of a transpile worker: the component's bytes. */
export interface TranspileWorkerData {
  readonly bytes: Uint8Array;
}

/** A transpiled component: `component.js` and its core modules by file name, and its imports and exports. */
export interface Transpiled {
  readonly files: Readonly<Record<string, Uint8Array>>;
  readonly imports: readonly string[];
  readonly exports: readonly string[];
}

/** The transpile worker's one answer. */
export type TranspileReply = { readonly ok: true; readonly result: Transpiled } | { readonly ok: false; readonly message: string };

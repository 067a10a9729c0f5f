/**
 * Runs one container's preview1 module: takes a thread for it (a worker of its
 * own from the pool, or — for a BestEffort pod when the runner has shared
 * threads, {@link RunnerOptions.sharedThreads} — a place on a shared thread,
 * where its clock sleeps suspend instead of holding the thread), builds its run
 * message and hands both to a {@link ModuleRun} (module-run.ts: the start, the
 * exit and the stop; its state machine is sketched there). On a shared thread
 * terminate() ends the whole thread (every module on it: see shared-threads.ts
 * for that policy).
 */
import { providerError, type ContainerSpec, type EventRecorder, type Logger } from '@nodelet/plugin-api/v1';
import type { LoadedModule } from './module-cache.ts';
import type { WorkerPool } from './worker-pool.ts';
import { CONTROL_BYTES } from './thread-stats.ts';
import type { SharedThreads } from './shared-threads.ts';
import { experimentalHttpConfig, type ExperimentalHttpConfig } from './experimental-http-config.ts';
import { StdinPipe } from './stdin-pipe.ts';
import { dedicatedHost, sharedHost, type ModuleHost } from './module-host.ts';
import { ModuleRun } from './module-run.ts';
import type { WasiContainer } from './wasi-container.ts';
import type { FdBudget, ListenAddress, LogRotation, RunMessage } from './worker-protocol.ts';
import { openRouteChannel, type OutboundRouter } from './services-channel.ts';

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

/** Where pre-opened sockets listen when the pod has no IP (no pod network on the node). */
export const FALLBACK_LISTEN_HOST = '127.0.0.1';

/**
 * The listeners a container gets: one per declared TCP `containerPort`, on the
 * pod's primary IP ({@link FALLBACK_LISTEN_HOST} when it has none), only when
 * the module imports `sock_accept` (a module that cannot accept would leave
 * clients hanging on an open port). UDP and SCTP ports get none.
 */
export function listenAddresses(spec: ContainerSpec, loaded: Pick<LoadedModule, 'acceptsSockets'>): ListenAddress[] {
  if (!loaded.acceptsSockets) return [];
  const host = spec.network?.podIPs[0] ?? FALLBACK_LISTEN_HOST;
  return (spec.ports ?? []).filter((p) => p.protocol === 'TCP').map((p) => ({ host, port: p.containerPort }));
}

/** Tunables of the container runs. */
export interface RunnerOptions {
  /** Log rotation of the container's log file. */
  readonly logOptions?: LogRotation;
  /** Instantiation timeout (default {@link DEFAULT_START_TIMEOUT_MS}). */
  readonly startTimeoutMs?: number;
  /** Descriptor budget of each container (none when absent). */
  readonly fdBudget?: FdBudget;
  /** Modules on a shared thread run with preemption points (preemption.ts); default false. */
  readonly preemption?: boolean;
  /** Where `wasi_experimental_http` requests connect (Services: services-channel.ts); as given without it. */
  readonly router?: OutboundRouter;
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

/**
 * Starts `spec` with the compiled module on a thread of `pool` (or a shared
 * thread). Resolves once the module is instantiated and about to run; rejects
 * (branded error) if it could not be instantiated, did not instantiate within
 * the start timeout, or no worker could be started. Aborting `signal` (the pod
 * is being deleted) during the start terminates the worker and rejects.
 * Warnings with a reason (e.g. `VolumeReplaced`) also become Warning events
 * through `events`.
 */
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
  // Parsed before a thread is taken: a bad annotation rejects with nothing to release.
  const http = loaded.experimentalHttp ? experimentalHttpConfig(spec) : undefined;
  const t0 = performance.now();
  const shared = opts.sharedThreads !== undefined && placement(spec, loaded) === 'shared';
  let host: ModuleHost;
  try {
    host = shared ? sharedHost(await opts.sharedThreads!.take()) : dedicatedHost(await pool.take());
  } catch (e) {
    throw providerError('Internal', `no worker thread for container ${spec.name}: ${(e as Error).message}`, { cause: e });
  }
  const waitMs = performance.now() - t0;
  const control = new SharedArrayBuffer(CONTROL_BYTES);
  let stdin: StdinPipe | undefined;
  try {
    stdin = spec.stdin ? await StdinPipe.create() : undefined;
  } catch (e) {
    host.terminate('no stdin');
    throw providerError('Internal', `cannot make the stdin of container ${spec.name}: ${(e as Error).message}`, { cause: e });
  }
  const run = new ModuleRun({
    spec,
    host,
    control,
    stdin,
    log,
    events,
    capBytes: loaded.capBytes,
    notResizable: loaded.notResizable,
    startTimeoutMs: opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS,
    t0,
    waitMs,
    replaceThread: () => pool.warm(),
  });
  // On a shared thread the module runs with preemption points: a busy loop yields the thread.
  const module = shared && opts.preemption ? await loaded.preemptible() : loaded.module;
  // Outbound HTTP asks where to connect (ClusterIPs, Service names) on a port of its own (dedicated threads only).
  const routes = http && opts.router ? openRouteChannel(opts.router, { pod: spec.pod, ip: spec.network?.podIPs[0] }) : undefined;
  try {
    const running = await run.start(runMessage(spec, { ...loaded, module }, opts, control, stdin, http, routes?.port), signal, routes ? [routes.port] : []);
    if (routes) void running.exit.then(() => routes.close());
    return running;
  } catch (e) {
    routes?.close();
    throw e;
  }
}

/** The run message of `spec`'s module (worker-protocol.ts). */
function runMessage(
  spec: ContainerSpec,
  loaded: LoadedModule,
  opts: RunnerOptions,
  control: SharedArrayBuffer,
  stdin: StdinPipe | undefined,
  http: ExperimentalHttpConfig | undefined,
  routes: RunMessage['routes'],
): RunMessage {
  return {
    type: 'run',
    module: loaded.module,
    importedMemories: loaded.importedMemories,
    argv: spec.argv,
    env: spec.env,
    mounts: spec.mounts.map((m) => ({ name: m.name, containerPath: m.containerPath, hostPath: m.hostPath, readOnly: m.readOnly })),
    logPath: spec.logPath,
    logOptions: opts.logOptions ?? {},
    control,
    memoryLimitBytes: loaded.capBytes,
    fdBudget: opts.fdBudget,
    listen: listenAddresses(spec, loaded),
    http,
    routes,
    stdinPath: stdin?.path,
  };
}

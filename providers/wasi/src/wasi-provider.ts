import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import {
  API_VERSION,
  providerError,
  type ContainerLimits,
  type ContainerRequestMetrics,
  type ContainerResizeOutcome,
  type ContainerSpec,
  type ContainerStats,
  type ImagePullOptions,
  type PodContext,
  type Provider,
  type ProviderContext,
  type PulledImage,
  type RunningContainer,
  type StreamIO,
  type ThreadLoad,
} from '@nodelet/plugin-api/v1';
import { listenAddresses, runContainer, type RunnerOptions } from './container-runner.ts';
import type { WasiContainer } from './wasi-container.ts';
import type { FdBudget } from './worker-protocol.ts';
import { makeFdBudget } from './fd-budget.ts';
import { ComponentCache } from './component-cache.ts';
import { ModuleCache } from './module-cache.ts';
import { wasmKindOfFile, type WasmKind } from './wasm-kind.ts';
import { DEFAULT_MAX_BOOTING, DEFAULT_POOL_SIZE, WorkerPool } from './worker-pool.ts';
import { DEFAULT_SHARED_THREADS, EXTRA_IDLE_MS, SharedThreads } from './shared-threads.ts';
import { readRequestMetrics } from './worker/http/request-metrics.mjs';
import { resolverRouter, type OutboundRouter } from './services-channel.ts';

/** Resolves when `signal` aborts. */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((r) => (signal.aborted ? r() : signal.addEventListener('abort', () => r(), { once: true })));
}

/** Layer media types of a Wasm module, in preference order (OCI artifact, then the Wasm OCI spec's). */
const MODULE_LAYER_TYPES = ['application/wasm', 'application/vnd.wasm.content.layer.v1+wasm'] as const;
/** A Spin application's locked app (core then fetches every layer of the artifact: core/images/spin-artifact.ts). */
export const SPIN_APP_TYPE = 'application/vnd.fermyon.spin.application.v1+config';
/** What the provider asks core for: a Spin application when the artifact is one, else a module or component layer. */
export const WASM_LAYER_TYPES = [SPIN_APP_TYPE, ...MODULE_LAYER_TYPES] as const;

const VERSION: string = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

/**
 * Worker JS-heap limits: the worker's own JavaScript is a few KB, so a small
 * heap is enough; a small young generation lowers the RSS of each running
 * module (see README.md). The old generation is 16 MiB, not less: Node 24's
 * worker bootstrap alone fills ~6 MiB of it (bytecode now lives in V8's trusted
 * space), and with 8 MiB each boot ran near the limit, collecting again and
 * again — 2.4x the CPU of a boot with 16 MiB (bench/README.md, "Node 24
 * regressions"), for 0.6 MiB less RSS per worker.
 */
export const DEFAULT_RESOURCE_LIMITS = { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 1, stackSizeMb: 1 } as const;

/**
 * The smallest JS heap of a worker running a module with JSPI (pre-opened
 * sockets, wasi_experimental_http): it runs node:net/http and suspended calls, and 8 MB ran out under load
 * (measured: "JS heap out of memory" after a few requests; 12 MB never did).
 */
export const JSPI_WORKER_MIN_OLD_GENERATION_MB = 16;

/** Options of {@link WasiProvider}. */
export interface WasiProviderOptions extends Omit<RunnerOptions, 'fdBudget' | 'sharedThreads' | 'router'> {
  /** Descriptors one container may hold (default 1024, at most 8192: see fd-budget.ts); EMFILE beyond. */
  readonly maxOpenFiles?: number;
  /** Descriptors all containers may hold together (default: see `defaultNodeMaxFds`); ENFILE beyond. */
  readonly nodeMaxOpenFiles?: number;
  /** Compiled modules to keep (default 32). */
  readonly cacheEntries?: number;
  /** Passed to `new Worker` (caps the worker's JS heap, not Wasm memory; default {@link DEFAULT_RESOURCE_LIMITS}). */
  readonly resourceLimits?: import('node:worker_threads').ResourceLimits;
  /**
   * Worker threads kept started and idle, so that a container start skips the
   * worker start (default 2; 0: each container starts its own worker). The pool
   * fills on the first image pull or container start, not before, and is
   * refilled after each start.
   */
  readonly workerPool?: number;
  /** Worker threads starting at the same time (default 4). */
  readonly maxBootingWorkers?: number;
  /**
   * Threads shared by BestEffort pods' modules (default {@link DEFAULT_SHARED_THREADS});
   * 0 gives every module a thread of its own, as for other pods.
   */
  readonly sharedThreads?: number;
  /** How long a shared thread beyond the first stays without modules before it ends (default {@link EXTRA_IDLE_MS}). */
  readonly sharedIdleEndMs?: number;
  /**
   * Preemption points in the modules of shared threads (preemption.ts; default true): a module
   * busy in a loop without WASI calls yields its thread every time slice and stops when asked.
   * They cost up to ~2× in the tightest loops; false runs the modules as they are, preemptible
   * only at their WASI calls (a busy one then holds its thread, and stopping it terminates the
   * thread with its neighbours).
   */
  readonly sharedPreemption?: boolean;
  /**
   * Where containers' outgoing requests connect when `init`'s context has no Service resolver:
   * the external runtime asks nodelet through its socket. `ProviderContext.services` wins.
   */
  readonly router?: OutboundRouter;
}

/**
 * The `wasi` provider: runs WASI preview1 command modules with node:wasi, and
 * WASI 0.2 components (wasi:cli/run, wasi:http/proxy) transpiled with jco, one
 * worker thread per container. See README.md for limits and the threat model.
 */
export class WasiProvider implements Provider {
  readonly name = 'wasi';
  readonly apiVersion = API_VERSION;
  // Its RuntimeClass handlers (`wasi`, and `spin` for Spin applications: SpinKube's RuntimeClass
  // wasmtime-spin-v2) are declared once, in package.json (nodelet.handlers).
  readonly architecture = 'wasm32-wasi';
  readonly os = 'wasi';
  readonly runtimeVersion = `nodelet-wasi://${VERSION}`;

  private readonly cache: ModuleCache;
  private readonly running = new Map<string, WasiContainer>();
  /** Module or component per image (digest and artifact path), at most 256 remembered. */
  private readonly kinds = new Map<string, WasmKind>();
  private readonly opts: RunnerOptions;
  private readonly _fdBudget: FdBudget;
  private readonly poolOpts: ConstructorParameters<typeof WorkerPool>[0];
  private pool: WorkerPool;
  /** Workers for modules run with JSPI (sockets, outbound HTTP): a bigger heap, booted on demand (none idle). */
  private socketPool: WorkerPool;
  private readonly socketPoolOpts: ConstructorParameters<typeof WorkerPool>[0];
  private ctx?: ProviderContext;
  private components?: ComponentCache;
  private readonly sharedSize: number;
  private readonly sharedIdleEndMs: number;
  private shared?: SharedThreads;
  /** Where outgoing requests connect (Services), set at init; none in standalone mode. */
  private router?: OutboundRouter;

  constructor(opts: WasiProviderOptions = {}) {
    this.cache = new ModuleCache(opts.cacheEntries);
    this._fdBudget = makeFdBudget(opts.maxOpenFiles, opts.nodeMaxOpenFiles);
    this.opts = { logOptions: opts.logOptions, startTimeoutMs: opts.startTimeoutMs, fdBudget: this._fdBudget, preemption: opts.sharedPreemption ?? true };
    this.sharedSize = opts.sharedThreads ?? DEFAULT_SHARED_THREADS;
    this.sharedIdleEndMs = opts.sharedIdleEndMs ?? EXTRA_IDLE_MS;
    this.poolOpts = {
      size: opts.workerPool ?? DEFAULT_POOL_SIZE,
      maxBooting: opts.maxBootingWorkers ?? DEFAULT_MAX_BOOTING,
      resourceLimits: opts.resourceLimits ?? DEFAULT_RESOURCE_LIMITS,
      onWarning: (message) => this.ctx?.log.warn({ provider: 'wasi' }, message),
    };
    this.pool = new WorkerPool(this.poolOpts);
    const limits = this.poolOpts.resourceLimits ?? {};
    this.socketPoolOpts = {
      ...this.poolOpts,
      size: 0,
      resourceLimits: { ...limits, maxOldGenerationSizeMb: Math.max(limits.maxOldGenerationSizeMb ?? 0, JSPI_WORKER_MIN_OLD_GENERATION_MB) },
    };
    this.socketPool = new WorkerPool(this.socketPoolOpts);
    this.router = opts.router;
  }

  async init(ctx: ProviderContext): Promise<void> {
    this.ctx = ctx;
    if (ctx.services) this.router = resolverRouter(ctx.services);
    this.components = new ComponentCache(join(ctx.rootDir, 'components'));
  }

  /**
   * Boots now the threads a start of a pod of `forPod.qosClass` will run on, as an image pull
   * does (a start usually follows): a BestEffort pod's modules go to the shared threads; other
   * pods' to the idle pooled workers; both when the class is unknown. `'shared'`: the shared
   * threads only (the external runtime boots them at its start: ~28 MiB for 2, and the first
   * BestEffort start then pays no thread boot, 1.3 s at load 24). A BestEffort module that needs
   * a thread of its own (a component, one that listens) boots a pooled worker when it starts;
   * booting two pooled workers at every BestEffort pull cost ~100 ms of CPU and ~22 MiB per node
   * that ran none (figure 11 of bench/README.md).
   */
  warm(forPod: Pick<PodContext, 'qosClass'> | 'shared' = {}): void {
    if (forPod === 'shared') return this.sharedThreads()?.warm();
    const shared = forPod.qosClass === 'BestEffort' ? this.sharedThreads() : undefined;
    if (shared) return shared.warm();
    this.pool.warm();
    if (forPod.qosClass === undefined) this.sharedThreads()?.warm();
  }

  /** Asks core's image service for the image's Wasm layer; core emits the events. */
  pullImage(image: string, opts: ImagePullOptions, ctx: PodContext): Promise<PulledImage> {
    if (!this.ctx) return Promise.reject(providerError('Unavailable', 'the wasi provider was not initialised'));
    this.warm(ctx); // boot the threads the start will take during the pull
    return this.ctx.images.pull(image, { ...opts, acceptLayerTypes: WASM_LAYER_TYPES, signal: ctx.signal });
  }

  /**
   * Module or component, read once per image digest (a layer's content never changes under
   * its digest): a burst of 100 replicas opens the file once.
   */
  private async kindOf(image: PulledImage): Promise<WasmKind> {
    const key = `${image.digest}\0${image.path}`;
    const known = this.kinds.get(key);
    if (known) return known;
    const kind = await wasmKindOfFile(image.path);
    if (kind !== 'unknown') {
      if (this.kinds.size >= 256) this.kinds.delete(this.kinds.keys().next().value!);
      this.kinds.set(key, kind);
    }
    return kind;
  }

  async startContainer(spec: ContainerSpec, ctx: PodContext): Promise<RunningContainer> {
    checkSpec(spec, this.running);
    if (spec.image.blobs !== undefined) return this.startSpinApp(spec, ctx);
    if ((await this.kindOf(spec.image)) === 'component') return this.startComponent(spec, ctx);
    // A pod that is not BestEffort may have its memory limit changed while it runs (resizeContainer):
    // its module's memory.grow asks a limit the worker can change (grow-limit.ts).
    const loaded = await this.cache.load(spec.image, spec.limits.memoryBytes, spec.qosClass !== 'BestEffort');
    if (spec.workingDir !== undefined) ctx.log.debug({ container: spec.name }, 'workingDir is ignored: WASI preview1 has no working directory');
    const pool = listenAddresses(spec, loaded).length > 0 || loaded.experimentalHttp ? this.socketPool : this.pool;
    const running = await runContainer(
      spec,
      loaded,
      ctx.log,
      pool,
      { ...this.opts, sharedThreads: this.sharedThreads(), router: this.router },
      ctx.signal,
      ctx.event,
    );
    return this.track(spec, running);
  }

  /** Keeps `running` under its container id until it exits (stats, stop and resize find it there). */
  private track(spec: ContainerSpec, running: WasiContainer): WasiContainer {
    this.running.set(spec.id, running);
    void running.exit.then(() => {
      if (this.running.get(spec.id) === running) this.running.delete(spec.id);
    });
    return running;
  }

  /** A WASI 0.2 component: transpiled once per digest (component-cache.ts), one thread per container. */
  private async startComponent(spec: ContainerSpec, ctx: PodContext): Promise<RunningContainer> {
    if (!this.components) throw providerError('Unavailable', 'the wasi provider was not initialised');
    const loaded = await this.components.load(spec.image);
    if (loaded.transpileMs > 0)
      ctx.log.info({ container: spec.name, image: spec.image.image, world: loaded.world, ms: Math.round(loaded.transpileMs) }, 'component transpiled');
    // Loaded with the first component: its runner, the wasi:http and platform interfaces (bench/README.md, idle footprint).
    const { startComponent } = await import('./component-runner.ts');
    const running = await startComponent(
      spec,
      loaded,
      ctx.log,
      {
        logOptions: this.opts.logOptions,
        startTimeoutMs: this.opts.startTimeoutMs,
        router: this.router,
        fdBudget: this._fdBudget,
        // The pod's directory from core; a runtime process or a test without one keeps the pod's data under the provider's.
        dataDir: ctx.podDir || join(this.ctx?.rootDir ?? '.', 'pods', spec.pod.uid),
      },
      ctx.signal,
      ctx.event,
    );
    return this.track(spec, running);
  }

  /** A Spin application (spin/spin-app-runner.ts): one thread per component, a router in front. */
  private async startSpinApp(spec: ContainerSpec, ctx: PodContext): Promise<RunningContainer> {
    if (!this.components) throw providerError('Unavailable', 'the wasi provider was not initialised');
    // Loaded with the first Spin app, as the component runner it builds on.
    const { startSpinApp } = await import('./spin/spin-app-runner.ts');
    const running = await startSpinApp(
      spec,
      ctx.log,
      {
        components: this.components,
        logOptions: this.opts.logOptions,
        startTimeoutMs: this.opts.startTimeoutMs,
        router: this.router,
        dataDir: ctx.podDir || join(this.ctx?.rootDir ?? '.', 'pods', spec.pod.uid),
      },
      ctx.signal,
      ctx.event,
    );
    return this.track(spec, running);
  }

  /** The shared threads (made on first use; none when `sharedThreads` is 0). */
  private sharedThreads(): SharedThreads | undefined {
    if (this.sharedSize <= 0) return undefined;
    this.shared ??= new SharedThreads({
      size: this.sharedSize,
      idleEndMs: this.sharedIdleEndMs,
      onWarning: (message) => this.ctx?.log.warn({ provider: 'wasi' }, message),
    });
    return this.shared;
  }

  /** The threads shared by BestEffort modules, with their load and event-loop delay (`/metrics`). */
  threads(): readonly ThreadLoad[] {
    return this.shared?.loads() ?? [];
  }

  /** The requests of the http components served per request, per container (`/metrics`). */
  requestMetrics(): readonly ContainerRequestMetrics[] {
    const out: ContainerRequestMetrics[] = [];
    for (const c of this.running.values()) {
      if (!c.requests) continue;
      const m = readRequestMetrics(c.requests.metrics);
      out.push({
        pod: c.requests.pod,
        container: c.requests.container,
        requestsByCode: m.codes,
        duration: { buckets: m.buckets, sum: m.durationSum, count: m.durationCount },
        inFlight: m.inFlight,
        instances: m.instances,
        traps: m.traps,
        timeouts: m.timeouts,
        overloaded: m.overloaded,
      });
    }
    return out;
  }

  /**
   * CPU time of the container's worker thread and its module's linear memory
   * size (see README.md, "Container stats"). NotFound for an unknown or ended container.
   */
  async stats(containerId: string): Promise<ContainerStats> {
    const running = this.running.get(containerId);
    if (!running) throw providerError('NotFound', `no running container with id ${containerId}`);
    return running.stats();
  }

  /**
   * In-place resize (`resizeContainer`): a preview1 module's memory limit changes without a
   * restart — a higher one at once (at the module's next WASI call, or at once when it sleeps),
   * a lower one only while the module's memory is below it (else `applied: false` with the
   * memory it holds: Wasm memories never shrink). The CPU limit is not enforced (README.md, *CPU
   * limit*): nothing to change. NotFound for an unknown or ended container; NotSupported for a
   * component, or a module that could not be prepared for it (grow-limit.ts).
   */
  async resizeContainer(containerId: string, limits: ContainerLimits): Promise<ContainerResizeOutcome> {
    const running = this.running.get(containerId);
    if (!running) throw providerError('NotFound', `no running container with id ${containerId}`);
    if (!running.resize) throw providerError('NotSupported', 'WASI components cannot be resized in place: their memories are capped when they start');
    return running.resize(limits);
  }

  /**
   * kubectl attach: writes the client's stdin into the module's stdin (a
   * preview1 module whose spec has `stdin: true`; see stdin-pipe.ts) until the
   * client leaves or the container ends. Its output reaches the client from
   * its log (core). NotFound for an unknown container; a container without a
   * stdin is refused as upstream refuses attaching stdin it did not allocate.
   */
  async attach(containerId: string, io: StreamIO): Promise<void> {
    const running = this.running.get(containerId);
    if (!running) throw providerError('NotFound', `no running container with id ${containerId}`);
    const pipe = running.stdin;
    if (!io.stdin) return await Promise.race([running.exit, aborted(io.signal)]).then(() => undefined);
    if (!pipe) throw providerError('InvalidArgument', 'the container has no stdin: set stdin: true in its spec (WASI components have none)');
    const it = io.stdin[Symbol.asyncIterator]();
    const end = Promise.race([running.exit, aborted(io.signal)]).then(() => ({ done: true, value: undefined }) as const);
    try {
      for (;;) {
        const next = await Promise.race([it.next(), end]);
        if (next.done) break;
        await pipe.write(next.value);
      }
    } finally {
      void it.return?.();
    }
  }

  /**
   * Writes `chunk` to the stdin of running container `containerId` (kubectl attach through the
   * external runtime, protocol 1.1); without a chunk only checks that it has a stdin. NotFound for
   * an unknown container, InvalidArgument for one without a stdin, as {@link attach}.
   */
  async writeStdin(containerId: string, chunk?: Uint8Array): Promise<void> {
    const running = this.running.get(containerId);
    if (!running) throw providerError('NotFound', `no running container with id ${containerId}`);
    if (!running.stdin) throw providerError('InvalidArgument', 'the container has no stdin: set stdin: true in its spec (WASI components have none)');
    if (chunk) await running.stdin.write(chunk);
  }

  /** Terminates every running module and the idle workers (a later start makes a new pool). */
  async shutdown(): Promise<void> {
    const pool = this.pool;
    const socketPool = this.socketPool;
    const shared = this.shared;
    this.shared = undefined;
    this.pool = new WorkerPool(this.poolOpts);
    this.socketPool = new WorkerPool(this.socketPoolOpts);
    await Promise.all([pool.close(), socketPool.close(), ...[...this.running.values()].map((r) => r.stop(0))]);
    await shared?.close();
    this.cache.clear();
  }

  /** Containers currently running (for tests and diagnostics). */
  get runningCount(): number {
    return this.running.size;
  }

  /** The descriptor budget shared by the containers (for tests and diagnostics). */
  get fdBudget(): FdBudget {
    return this._fdBudget;
  }

  /** The worker pool (for tests and diagnostics). */
  get workerPool(): WorkerPool {
    return this.pool;
  }
}

function checkSpec(spec: ContainerSpec, running: ReadonlyMap<string, RunningContainer>): void {
  const bad = (msg: string) => providerError('InvalidArgument', `container ${spec.name}: ${msg}`);
  if (running.has(spec.id)) throw bad(`a container with id ${spec.id} is already running`);
  if (spec.argv.length === 0) throw bad('argv is empty (argv[0] must name the program)');
  const seen = new Set<string>();
  for (const m of spec.mounts) {
    if (!isAbsolute(m.containerPath)) throw bad(`mountPath ${m.containerPath} of volume ${m.name} is not absolute`);
    if (!isAbsolute(m.hostPath)) throw bad(`host path ${m.hostPath} of volume ${m.name} is not absolute`);
    if (seen.has(m.containerPath)) throw bad(`mountPath ${m.containerPath} is used twice`);
    seen.add(m.containerPath);
  }
}

/**
 * Runs one WASI 0.2 component container in its own worker thread
 * (worker/component-worker.mjs), started for it and never reused.
 *
 *   startComponent ──new Worker──► starting ──'started'──► running ──'exit'/'trap'/thread exit──► exited
 *                                     │                       │
 *                                     │'failed' / error        │ stop(): worker.terminate()
 *                                     │start timeout / abort   ▼
 *                                     ▼                     exited (137)
 *                                 (rejects; thread terminated)
 *
 * cli world: `wasi:cli/run` is called once; the exit code is `run`'s result
 * (0 / 1) or the code given to `wasi:cli/exit` (the thread's exit code).
 * http world: the component's `incoming-handler` serves `listen.host:listen.port`
 * until the container is stopped: with an instance per request, many at once
 * (worker/http-worker.mjs, worker/http/), when its core is one module whose
 * imports nodelet's own host implements — else with one instance serving the
 * requests one at a time through jco's bindings (worker/component-worker.mjs).
 *
 * Components do not come from the worker pool: the pool's workers are
 * preview1 workers (node:wasi loaded and warmed up), and a component thread
 * loads preview2-shim instead. A component start therefore pays a worker boot
 * (~30–50 ms) that a preview1 start does not.
 */
import { Worker } from 'node:worker_threads';
import { providerError, type ContainerExit, type ContainerSpec, type ContainerStats, type EventRecorder, type Logger } from '@nodelet/plugin-api/v1';
import { CRI_LOG_MODULE_URL } from '@nodelet/plugin-api/v1/toolkit';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LoadedComponent } from './component-cache.ts';
import { DEFAULT_START_TIMEOUT_MS } from './container-runner.ts';
import { codeExit, KILLED_EXIT_CODE, oomHeadroom, trapExit, type WasiContainer } from './wasi-container.ts';
import {
  plainWorker,
  type ComponentMessage,
  type ComponentWorkerData,
  type ContainerRunInput,
  type FdBudget,
  type HttpWorkerData,
  type ListenAddress,
  type LogRotation,
} from './worker-protocol.ts';
import { capModuleMemory, MemoryCapError, WASM_PAGE, type CappedModule } from './memory-cap.ts';
import { exportMutableGlobals } from './global-exports.ts';
import { trackStack } from './stack-tracking.ts';
import { httpServing } from './http-serving-config.ts';
import { planPerRequest } from './worker/http/instance-pool.mjs';
import { newRequestMetrics } from './worker/http/request-metrics.mjs';
import type { RequestsServed } from './wasi-container.ts';
import { openRouteChannel, type OutboundRouter } from './services-channel.ts';
import { platformConfig, type PlatformConfig } from './platform/platform-config.ts';
import { outboundPolicy } from './outbound-config.ts';
import type { OutboundPolicy } from './outbound-hosts.mjs';

const COMPONENT_WORKER_URL = new URL('./worker/component-worker.mjs', import.meta.url);
const HTTP_WORKER_URL = new URL('./worker/http-worker.mjs', import.meta.url);

/** Options of {@link startComponent}. */
export interface ComponentRunOptions {
  readonly logOptions?: LogRotation;
  /** Instantiation (and, for http, listen) timeout (default {@link DEFAULT_START_TIMEOUT_MS}). */
  readonly startTimeoutMs?: number;
  /** Passed to `new Worker`. */
  readonly resourceLimits?: import('node:worker_threads').ResourceLimits;
  /** Where the component's outgoing requests connect (Services: services-channel.ts); as given without it. */
  readonly router?: OutboundRouter;
  /** The pod's directory, where its SQLite key-value stores are (platform/platform-config.ts). */
  readonly dataDir: string;
  /** The descriptor budget a component's sockets count against (none when absent). */
  readonly fdBudget?: FdBudget;
  /** Where an http component listens instead of {@link listenAddress} (a Spin app's components, behind its router). */
  readonly listen?: ListenAddress;
  /** Changes the platform configuration made from the spec (a Spin component's variables and stores). */
  readonly platform?: (p: PlatformConfig) => PlatformConfig;
  /** The allow-list instead of the pod annotation's (outbound-config.ts): a Spin component's `allowed_outbound_hosts`. */
  readonly outbound?: OutboundPolicy;
}

/**
 * Where an http component listens: the pod's first IP (127.0.0.1 when the
 * pod has none, e.g. on a node without a pod network), at the container's
 * first declared TCP port. Throws InvalidArgument when it declares none.
 */
export function listenAddress(spec: ContainerSpec): ListenAddress {
  const port = spec.ports?.find((p) => p.protocol === 'TCP')?.containerPort;
  if (port === undefined) {
    throw providerError(
      'InvalidArgument',
      `container ${spec.name}: a wasi:http component needs a TCP containerPort to listen on (the first declared one is used)`,
    );
  }
  return { host: spec.network?.podIPs[0] ?? '127.0.0.1', port };
}

/**
 * Starts `spec` as the transpiled component `loaded`. Resolves once it runs
 * (cli: about to call run; http: listening); rejects with a branded error if
 * it could not be instantiated, its port is taken (reason `PortInUse`), or it
 * did not start within the start timeout. Warnings with a reason (e.g.
 * `VolumeReplaced`) also become Warning events through `events`.
 */
export async function startComponent(
  spec: ContainerSpec,
  loaded: LoadedComponent,
  log: Logger,
  opts: ComponentRunOptions,
  signal?: AbortSignal,
  events?: EventRecorder,
): Promise<WasiContainer> {
  signal?.throwIfAborted();
  const made = platformConfig(spec, opts.dataDir);
  const platform = opts.platform ? opts.platform(made) : made;
  const outbound = opts.outbound ?? outboundPolicy(spec);
  const capBytes = spec.limits.memoryBytes;
  const compiled = await compileCoreModules(loaded, spec, capBytes);
  const modules = Object.fromEntries(Object.entries(compiled).map(([f, c]) => [f, c.module]));
  const run: ContainerRunInput = {
    argv: spec.argv,
    env: spec.env,
    mounts: spec.mounts.map((m) => ({ name: m.name, containerPath: m.containerPath, hostPath: m.hostPath, readOnly: m.readOnly })),
    logPath: spec.logPath,
    logOptions: opts.logOptions ?? {},
  };
  const listen = loaded.world === 'http' ? (opts.listen ?? listenAddress(spec)) : undefined;
  // http: an instance per request when the component allows it (instance-pool.mjs), else one
  // instance through jco's bindings serves every request.
  const planned = listen ? planPerRequest(modules) : undefined;
  let requests: RequestsServed | undefined;
  // Outgoing requests ask where to connect (ClusterIPs, Service names) on a port of their own.
  const routes = opts.router ? openRouteChannel(opts.router, { pod: spec.pod, ip: spec.network?.podIPs[0] }) : undefined;
  const transferList = routes ? [routes.port] : [];
  let worker: Worker;
  if (listen && planned && 'plan' in planned) {
    const main = Object.values(compiled).find((c) => c.module === planned.plan.module);
    const serving = httpServing(spec, main?.startBytes ?? 0);
    requests = { metrics: newRequestMetrics(), pod: { namespace: spec.pod.namespace, name: spec.pod.name, uid: spec.pod.uid }, container: spec.name };
    const data: HttpWorkerData = {
      ...run,
      module: planned.plan.module,
      handleExport: planned.plan.handleExport,
      criLogUrl: CRI_LOG_MODULE_URL,
      listen,
      metrics: requests.metrics,
      ...serving,
      oomAboveBytes: capBytes === undefined ? undefined : capBytes - oomHeadroom(capBytes),
      routes: routes?.port,
      platform,
      outbound,
    };
    log.debug(
      { container: spec.name, ...serving.bounds, requestTimeoutMs: serving.requestTimeoutMs, stackTracked: main?.stackTracked },
      'serving with an instance per request',
    );
    worker = new Worker(HTTP_WORKER_URL, { ...plainWorker(), workerData: data, transferList, resourceLimits: opts.resourceLimits });
  } else {
    if (planned && 'why' in planned) log.warn({ container: spec.name }, `the component is served with one instance for every request: ${planned.why}`);
    const data: ComponentWorkerData = {
      ...run,
      dir: loaded.dir,
      modules,
      world: loaded.world,
      criLogUrl: CRI_LOG_MODULE_URL,
      listen,
      routes: routes?.port,
      platform,
      imports: loaded.imports,
      outbound,
      sockets: {
        bindHost: spec.network?.podIPs[0] ?? '127.0.0.1',
        tcpPorts: (spec.ports ?? []).filter((p) => p.protocol === 'TCP').map((p) => p.containerPort),
        udpPorts: (spec.ports ?? []).filter((p) => p.protocol === 'UDP').map((p) => p.containerPort),
        fdBudget: opts.fdBudget,
      },
    };
    worker = new Worker(COMPONENT_WORKER_URL, { ...plainWorker(), workerData: data, transferList, resourceLimits: opts.resourceLimits });
  }
  // The worker sends the component's output to its log; anything else written is dropped.
  worker.stdout.resume();
  worker.stderr.resume();
  let outcome: Omit<ContainerExit, 'finishedAt'> | undefined;
  let stopping = false;
  let startedAt: Date | undefined;
  const t0 = performance.now();

  return new Promise<WasiContainer>((resolveStart, rejectStart) => {
    let resolveExit!: (e: ContainerExit) => void;
    const exit = new Promise<ContainerExit>((r) => {
      resolveExit = r;
    });
    const running: WasiContainer = {
      id: spec.id,
      requests,
      get startedAt() {
        return startedAt ?? new Date();
      },
      exit,
      stats: (): ContainerStats => {
        // CPU of the component's thread (not of the shim's I/O thread); no memory figure.
        const usage = (worker as unknown as { cpuUsage?: () => { user: number; system: number } }).cpuUsage?.();
        return { timestamp: new Date(), cpu: usage ? { usageCoreNanoSeconds: (usage.user + usage.system) * 1000 } : undefined };
      },
      async stop() {
        // No signals in WASI; a component's thread is simply terminated (its files are
        // held by the shim's I/O thread, which ends with it).
        if (!stopping) {
          stopping = true;
          void worker.terminate();
        }
        await exit;
      },
    };
    const fail = (err: Error) => {
      if (startedAt !== undefined) return;
      stopping = true;
      cleanup();
      rejectStart(err);
      void worker.terminate();
    };
    const startTimeoutMs = opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
    const timer = setTimeout(
      () =>
        fail(
          providerError(
            'InvalidImage',
            `the component of image ${spec.image.image} did not start within ${startTimeoutMs / 1000}s; its thread was terminated`,
            {
              reason: 'StartTimeout',
            },
          ),
        ),
      startTimeoutMs,
    );
    const onAbort = () => fail(providerError('Unavailable', `container ${spec.name} was not started: the pod is being deleted`));
    function cleanup() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (m: ComponentMessage) => {
      switch (m.type) {
        case 'started':
          cleanup();
          if (stopping) break;
          startedAt = new Date();
          log.debug({ container: spec.name, world: loaded.world, startMs: Math.round(performance.now() - t0), ...listen }, 'component started');
          resolveStart(running);
          break;
        case 'failed':
          fail(
            m.reason === 'PortInUse'
              ? providerError('InvalidArgument', `container ${spec.name}: ${m.message}`, { reason: 'PortInUse' })
              : m.reason === 'mount'
                ? providerError('InvalidArgument', `container ${spec.name}: ${m.message}`)
                : providerError('InvalidImage', `cannot start the component of image ${spec.image.image}: ${m.message}`),
          );
          break;
        case 'warning':
          log.warn({ container: spec.name }, m.message);
          if (m.reason !== undefined) events?.('Warning', m.reason, `container ${spec.name}: ${m.message}`);
          break;
        case 'exit':
          outcome ??= codeExit(m.code);
          break;
        case 'trap':
          // As for modules: a trap with the memory within the headroom of its cap is an OOM kill.
          outcome ??= trapExit(m.message, m.memoryBytes ?? 0, capBytes);
          break;
      }
    });
    worker.on('error', (e) => {
      if (startedAt === undefined) fail(providerError('Internal', `the worker of container ${spec.name} failed: ${e.message}`, { cause: e }));
      else outcome ??= { exitCode: 1, reason: 'Error', message: `${e.name}: ${e.message}` };
    });
    worker.on('exit', (code) => {
      cleanup();
      routes?.close();
      if (startedAt === undefined) fail(providerError('Internal', `the worker of container ${spec.name} exited before the component started (code ${code})`));
      const result: ContainerExit = {
        ...(stopping && outcome === undefined ? { exitCode: KILLED_EXIT_CODE, reason: 'Error' } : (outcome ?? codeExit(code))),
        finishedAt: new Date(),
      };
      resolveExit(result);
    });
  });
}

/**
 * Compiles the transpiled component's core modules with every memory's maximum
 * capped to `capBytes` (memory-cap.ts, as for modules). A cap below what the
 * component needs to start fails like a module's: InvalidArgument, reason OOMKilled.
 */
async function compileCoreModules(loaded: LoadedComponent, spec: ContainerSpec, capBytes: number | undefined): Promise<Record<string, CompiledCore>> {
  const out: Record<string, CompiledCore> = {};
  for (const file of (await readdir(loaded.dir)).filter((f) => f.endsWith('.wasm'))) {
    const bytes = await readFile(join(loaded.dir, file));
    let capped: CappedModule;
    try {
      capped = capModuleMemory(bytes, capBytes);
    } catch (e) {
      if (e instanceof MemoryCapError && e.kind === 'too-small') {
        throw providerError('InvalidArgument', `image ${spec.image.image}: ${e.message}`, { reason: 'OOMKilled', cause: e });
      }
      throw providerError('InvalidImage', `the transpiled component of image ${spec.image.image} has an invalid core module ${file}: ${(e as Error).message}`, {
        cause: e,
      });
    }
    const startBytes = (capped.memories[0]?.min ?? 0) * WASM_PAGE;
    out[file] =
      loaded.world === 'http'
        ? await compileForReset(capped.bytes, startBytes)
        : { module: await WebAssembly.compile(capped.bytes as Uint8Array<ArrayBuffer>), startBytes, stackTracked: false };
  }
  return out;
}

/** A compiled core module, with its starting memory size and whether it records its stack depth. */
interface CompiledCore {
  readonly module: WebAssembly.Module;
  readonly startBytes: number;
  readonly stackTracked: boolean;
}

/**
 * Compiles a core module of an http component so its instances can be reset after each request:
 * its mutable globals exported (global-exports.ts) and, when it allows, its stack depth recorded
 * (stack-tracking.ts). A module either rewrite does not apply to is compiled as it is (and is then
 * served with one instance, or reset in full).
 */
async function compileForReset(bytes: Uint8Array, startBytes: number): Promise<CompiledCore> {
  let exported: Uint8Array;
  try {
    exported = exportMutableGlobals(bytes).bytes;
  } catch {
    return { module: await WebAssembly.compile(bytes as Uint8Array<ArrayBuffer>), startBytes, stackTracked: false };
  }
  const tracked = trackStack(exported);
  if (!('untracked' in tracked)) {
    try {
      return { module: await WebAssembly.compile(tracked.bytes as Uint8Array<ArrayBuffer>), startBytes, stackTracked: true };
    } catch {
      // a rewrite the engine refuses: reset in full instead
    }
  }
  return { module: await WebAssembly.compile(exported as Uint8Array<ArrayBuffer>), startBytes, stackTracked: false };
}

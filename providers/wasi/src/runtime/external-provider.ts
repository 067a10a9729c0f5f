/**
 * The `wasi` provider with an external runtime (`NODELET_WASI_RUNTIME=external`):
 * a client of the WASI runtime process (runtime-main.ts), which owns the
 * running modules and writes their CRI logs. The containers outlive nodelet
 * (`keepsContainers`): a restarted nodelet lists and re-adopts them.
 *
 *   init ──connect──► connected ◄──────────────┐
 *     │ no runtime answers                     │ connect
 *     └──spawn (detached) ──► connected        │
 *   connected ──socket closed (runtime died)──► lost: every tracked container
 *              ends ContainerStatusUnknown/137 (+ SandboxChanged) ──► spawn ──┘
 *   connected ──shutdown (nodelet stops)──► closed (containers keep running)
 */
import { join } from 'node:path';
import {
  API_VERSION,
  providerError,
  type AdoptableContainer,
  type ContainerExit,
  type ContainerLimits,
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
import { WASM_LAYER_TYPES } from '../wasi-provider.ts';
import { RuntimeConnection } from './runtime-connection.ts';
import { fromWireExit, PID_FILE_NAME, SOCKET_NAME, type NoteLine, type WireContainer } from './protocol.ts';
import { spawnRuntime } from './spawn-runtime.ts';

/** How long nodelet waits for a runtime it spawned to serve its socket. */
const SPAWN_WAIT_MS = 15_000;
const SPAWN_POLL_MS = 50;

/** Upstream's reason and exit code for a container the runtime can no longer locate. */
export const LOST_EXIT = { exitCode: 137, reason: 'ContainerStatusUnknown' } as const;

interface Tracked {
  readonly resolve: (x: ContainerExit) => void;
  readonly exit: Promise<ContainerExit>;
  readonly ctx: PodContext;
}

/** Resolves when `signal` aborts. */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((r) => (signal.aborted ? r() : signal.addEventListener('abort', () => r(), { once: true })));
}

/** The `wasi` provider as a client of the WASI runtime process. */
export class ExternalWasiProvider implements Provider {
  readonly name = 'wasi';
  readonly apiVersion = API_VERSION;
  // Its RuntimeClass handlers (`wasi`, `spin`) are declared once, in package.json (nodelet.handlers).
  readonly architecture = 'wasm32-wasi';
  readonly os = 'wasi';
  readonly keepsContainers = true;

  private ctx?: ProviderContext;
  private conn?: Promise<RuntimeConnection>;
  private readonly tracked = new Map<string, Tracked>();
  /** Pods of containers being started (events during the start go there). */
  private readonly starting = new Map<string, PodContext>();
  /** Exits that arrived before their start's answer. */
  private readonly early = new Map<string, ContainerExit>();
  private closing = false;
  private listing?: Promise<WireContainer[]>;
  private lastThreads: readonly ThreadLoad[] = [];
  private threadsAsked = false;

  constructor(readonly runtimeVersion: string) {}

  private get socketPath(): string {
    return join(this.ctx!.rootDir, SOCKET_NAME);
  }

  /**
   * Connects to a runtime that already runs (a restarted nodelet re-adopts its containers);
   * starts none: the runtime is started by the first image pull or container start, so a
   * node without WASI pods runs no runtime process.
   */
  async init(ctx: ProviderContext): Promise<void> {
    this.ctx = ctx;
    await this.existing();
  }

  /** The connection to the runtime, connecting (and spawning it) when there is none. */
  private runtime(): Promise<RuntimeConnection> {
    if (this.closing) return Promise.reject(providerError('Unavailable', 'the wasi provider is shutting down'));
    this.conn ??= this.connect(true).then(
      (c) => c!,
      (e: unknown) => {
        this.conn = undefined;
        throw e;
      },
    );
    return this.conn;
  }

  /** The connection to a runtime that runs; undefined when none does (none is started). */
  private async existing(): Promise<RuntimeConnection | undefined> {
    if (this.closing) throw providerError('Unavailable', 'the wasi provider is shutting down');
    if (this.conn) return this.conn;
    const c = await this.connect(false);
    if (!c) return undefined;
    if (this.conn) {
      c.close(); // a start connected meanwhile
      return this.conn;
    }
    this.conn = Promise.resolve(c);
    return c;
  }

  private async connect(spawn: boolean): Promise<RuntimeConnection | undefined> {
    const services = this.ctx!.services;
    const open = () =>
      RuntimeConnection.open(
        this.socketPath,
        (n) => this.onNote(n),
        () => this.onLost(),
        // Containers' outgoing connections: the runtime asks where they go (Services).
        services ? (ask) => services.route(ask.host, ask.port, ask.client, ask.protocol) : undefined,
      );
    const dropDeadline = Date.now() + SPAWN_WAIT_MS;
    for (;;) {
      try {
        const c = await open();
        this.ctx!.log.info({ pid: c.hello?.pid, socket: this.socketPath }, 'connected to the running wasi runtime');
        return c;
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ECONNREFUSED') break;
        // Dropped before answering: a runtime that is dying (or busy starting). Ask again until
        // the socket refuses (then start a new one) or answers; never start a second runtime beside a live one.
        if (code === 'ECONNRESET' && Date.now() < dropDeadline) {
          await new Promise((r) => setTimeout(r, SPAWN_POLL_MS));
          continue;
        }
        // A runtime that answers but refuses (another protocol version) still owns its
        // containers: starting a second one would run them twice. Stop it on purpose.
        throw providerError(
          'Unavailable',
          `the wasi runtime at ${this.socketPath} answers but cannot be used (${(e as Error).message}): stop it (kill $(cat ${join(this.ctx!.rootDir, PID_FILE_NAME)})) to start a new one`,
        );
      }
    }
    if (!spawn) return undefined;
    const pid = spawnRuntime(this.ctx!.rootDir);
    this.ctx!.log.info({ pid, socket: this.socketPath }, 'started the wasi runtime process');
    const deadline = Date.now() + SPAWN_WAIT_MS;
    for (;;) {
      try {
        return await open();
      } catch (e) {
        if (Date.now() > deadline)
          throw providerError('Unavailable', `the wasi runtime (pid ${pid}) did not serve ${this.socketPath}: ${(e as Error).message}`);
        await new Promise((r) => setTimeout(r, SPAWN_POLL_MS));
      }
    }
  }

  private onNote(n: NoteLine): void {
    if (n.note === 'event') {
      (this.tracked.get(n.containerId)?.ctx ?? this.starting.get(n.containerId))?.event(n.type, n.reason, n.message);
      return;
    }
    const exit = fromWireExit(n.exit);
    const t = this.tracked.get(n.containerId);
    if (!t) {
      this.early.set(n.containerId, exit);
      return;
    }
    this.finish(n.containerId, exit, true);
  }

  /**
   * The runtime died: its containers are lost (reported as upstream reports a lost sandbox).
   * Core restarts them by policy; the first start spawns a new runtime.
   */
  private onLost(): void {
    this.conn = undefined;
    if (this.closing) return;
    this.ctx?.log.warn({ containers: this.tracked.size }, 'the wasi runtime process ended: its containers are lost');
    for (const [id, t] of [...this.tracked]) {
      t.ctx.event('Normal', 'SandboxChanged', 'Pod sandbox changed, it will be killed and re-created.');
      this.finish(id, { ...LOST_EXIT, message: 'The container could not be located: the wasi runtime process ended', finishedAt: new Date() }, false);
    }
  }

  private finish(id: string, exit: ContainerExit, release: boolean): void {
    const t = this.tracked.get(id);
    if (!t) return;
    this.tracked.delete(id);
    t.resolve(exit);
    // The runtime keeps an exit until a client collected it.
    if (release) void this.conn?.then((c) => c.request('release', { containerId: id })).catch(() => undefined);
  }

  /** A handle on container `w` of the runtime. */
  private track(w: WireContainer, ctx: PodContext): RunningContainer {
    let resolve!: (x: ContainerExit) => void;
    const exit = new Promise<ContainerExit>((r) => (resolve = r));
    this.tracked.set(w.id, { resolve, exit, ctx });
    const ended = w.exit ? fromWireExit(w.exit) : this.early.get(w.id);
    this.early.delete(w.id);
    if (ended) this.finish(w.id, ended, true);
    return {
      id: w.id,
      startedAt: new Date(w.startedAt),
      exit,
      stop: async (gracePeriodMs: number) => {
        if (this.tracked.has(w.id)) {
          const c = await this.runtime();
          await c.request('stop', { containerId: w.id, graceMs: gracePeriodMs }).catch((e: unknown) => {
            if (!this.tracked.has(w.id)) return;
            throw e;
          });
        }
        await exit;
      },
    };
  }

  /**
   * Asks core's image service for the image's Wasm layer (nodelet pulls; the runtime reads the
   * file). A start usually follows: the runtime boots its threads meanwhile (`warm`, 1.1).
   */
  pullImage(image: string, opts: ImagePullOptions, ctx: PodContext): Promise<PulledImage> {
    if (!this.ctx) return Promise.reject(providerError('Unavailable', 'the wasi provider was not initialised'));
    // The first pull starts the runtime (none runs on a node without WASI pods).
    void this.runtime()
      .then((c) => ((c.hello?.minor ?? 0) >= 1 ? c.request('warm', ctx.qosClass ? { qosClass: ctx.qosClass } : {}) : null))
      .catch((e: unknown) => this.ctx?.log.warn({ err: String(e) }, 'the wasi runtime could not be started'));
    return this.ctx.images.pull(image, { ...opts, acceptLayerTypes: WASM_LAYER_TYPES, signal: ctx.signal });
  }

  async startContainer(spec: ContainerSpec, ctx: PodContext): Promise<RunningContainer> {
    const c = await this.runtime();
    ctx.signal.throwIfAborted();
    // Registered before the answer so that events during the start reach the pod.
    this.starting.set(spec.id, ctx);
    // The pod deleted while its module still starts (e.g. a start function that loops): the runtime gives it up (1.1).
    const cancel = () => void c.request('cancel', { containerId: spec.id }).catch(() => undefined);
    const cancels = (c.hello?.minor ?? 0) >= 1;
    if (cancels) ctx.signal.addEventListener('abort', cancel, { once: true });
    try {
      return this.track(await c.request('start', { spec, podDir: ctx.podDir }), ctx);
    } finally {
      if (cancels) ctx.signal.removeEventListener('abort', cancel);
      this.starting.delete(spec.id);
    }
  }

  async listContainers(): Promise<AdoptableContainer[]> {
    const c = await this.existing();
    const list = c ? await c.request('list', {}) : [];
    return list.map((w) => ({
      id: w.id,
      pod: w.pod,
      name: w.name,
      startedAt: new Date(w.startedAt),
      exit: w.exit ? fromWireExit(w.exit) : undefined,
      restartCount: w.restartCount,
    }));
  }

  async adoptContainer(id: string, ctx: PodContext): Promise<RunningContainer | undefined> {
    if (this.tracked.has(id)) throw providerError('InvalidArgument', `container ${id} is already adopted`);
    const w = (await this.listShared()).find((x) => x.id === id);
    if (this.tracked.has(id)) throw providerError('InvalidArgument', `container ${id} is already adopted`);
    return w ? this.track(w, ctx) : undefined;
  }

  /**
   * One `list` shared by the adoptions asking at the same time (a restarted
   * nodelet adopts every pod's containers at once). An exit that happens after
   * the list was taken still arrives as a notification (kept in `early`).
   */
  private listShared(): Promise<WireContainer[]> {
    this.listing ??= this.existing()
      .then((c) => (c ? c.request('list', {}) : []))
      .finally(() => {
        this.listing = undefined;
      });
    return this.listing;
  }

  async releaseContainer(id: string): Promise<void> {
    this.early.delete(id);
    const c = await this.existing();
    await c?.request('release', { containerId: id });
  }

  /**
   * kubectl attach through the runtime (protocol 1.1): checks that the container has a stdin
   * (`stream` kind `stdin-open`), then forwards the client's stdin chunk by chunk (`stream` kind
   * `stdin`, each awaited: the runtime answers once its pipe took the chunk) until the client
   * leaves or the container ends. Output reaches the client from the CRI log (core). A 1.0
   * runtime (started by an older nodelet and re-adopted) cannot: NotSupported, naming how to
   * restart it.
   */
  async attach(containerId: string, io: StreamIO): Promise<void> {
    const t = this.tracked.get(containerId);
    if (!t) throw providerError('NotFound', `no running container with id ${containerId}`);
    const end = Promise.race([t.exit, aborted(io.signal)]).then(() => ({ done: true, value: undefined }) as const);
    if (!io.stdin) return void (await end);
    const c = await this.runtime();
    if ((c.hello?.minor ?? 0) < 1)
      throw providerError(
        'NotSupported',
        `the running wasi runtime (pid ${c.hello?.pid}) speaks protocol ${c.hello?.version}.0, which does not forward stdin: restart it on purpose (kill $(cat ${join(this.ctx!.rootDir, PID_FILE_NAME)})) to get the current one`,
      );
    await c.request('stream', { containerId, kind: 'stdin-open' });
    const it = io.stdin[Symbol.asyncIterator]();
    try {
      for (;;) {
        const next = await Promise.race([it.next(), end]);
        if (next.done) break;
        await c.request('stream', { containerId, kind: 'stdin', data: Buffer.from(next.value).toString('base64') });
      }
    } finally {
      void it.return?.();
    }
  }

  /**
   * In-place resize through the runtime (`resize`, protocol 1.2), which holds the module: see
   * `WasiProvider.resizeContainer`. A 1.0 or 1.1 runtime (started by an older nodelet and
   * re-adopted) cannot: NotSupported, naming how to restart it.
   */
  async resizeContainer(containerId: string, limits: ContainerLimits): Promise<ContainerResizeOutcome> {
    if (!this.tracked.has(containerId)) throw providerError('NotFound', `no running container with id ${containerId}`);
    const c = await this.runtime();
    if ((c.hello?.minor ?? 0) < 2)
      throw providerError(
        'NotSupported',
        `the running wasi runtime (pid ${c.hello?.pid}) speaks protocol ${c.hello?.version}.${c.hello?.minor ?? 0}, which cannot resize containers in place: restart it on purpose (kill $(cat ${join(this.ctx!.rootDir, PID_FILE_NAME)})) to get the current one`,
      );
    return c.request('resize', { containerId, limits });
  }

  async stats(containerId: string): Promise<ContainerStats> {
    const c = await this.runtime();
    const s = await c.request('stats', { containerId });
    return { ...s, timestamp: new Date(s.timestamp) };
  }

  /**
   * The runtime's shared threads and their load, as of the previous call (the
   * capability is synchronous and the runtime is another process): each call
   * asks for fresh figures for the next one. `/metrics` scrapes call it regularly.
   */
  threads(): readonly ThreadLoad[] {
    if (!this.threadsAsked && this.conn) {
      this.threadsAsked = true;
      void this.conn
        .then((c) => c.request('threads', {}))
        .then(
          (t) => (this.lastThreads = t),
          () => undefined,
        )
        .finally(() => (this.threadsAsked = false));
    }
    return this.lastThreads;
  }

  /** Closes the connection; the runtime and its containers keep running (nodelet restarts re-adopt them). */
  async shutdown(): Promise<void> {
    this.closing = true;
    const c = await this.conn?.catch(() => undefined);
    c?.close();
  }
}

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
  type ContainerSpec,
  type ContainerStats,
  type ImagePullOptions,
  type PodContext,
  type Provider,
  type ProviderContext,
  type PulledImage,
  type RunningContainer,
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
  readonly ctx: PodContext;
}

/** The `wasi` provider as a client of the WASI runtime process. */
export class ExternalWasiProvider implements Provider {
  readonly name = 'wasi';
  readonly apiVersion = API_VERSION;
  readonly handlers = ['wasi'] as const;
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

  async init(ctx: ProviderContext): Promise<void> {
    this.ctx = ctx;
    await this.runtime();
  }

  /** The connection to the runtime, connecting (and spawning it) when there is none. */
  private runtime(): Promise<RuntimeConnection> {
    if (this.closing) return Promise.reject(providerError('Unavailable', 'the wasi provider is shutting down'));
    this.conn ??= this.connect().catch((e: unknown) => {
      this.conn = undefined;
      throw e;
    });
    return this.conn;
  }

  private async connect(): Promise<RuntimeConnection> {
    const open = () =>
      RuntimeConnection.open(
        this.socketPath,
        (n) => this.onNote(n),
        () => this.onLost(),
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

  /** The runtime died: its containers are lost (reported as upstream reports a lost sandbox); a new runtime is started. */
  private onLost(): void {
    this.conn = undefined;
    if (this.closing) return;
    this.ctx?.log.warn({ containers: this.tracked.size }, 'the wasi runtime process ended: its containers are lost');
    for (const [id, t] of [...this.tracked]) {
      t.ctx.event('Normal', 'SandboxChanged', 'Pod sandbox changed, it will be killed and re-created.');
      this.finish(id, { ...LOST_EXIT, message: 'The container could not be located: the wasi runtime process ended', finishedAt: new Date() }, false);
    }
    void this.runtime().catch((e: unknown) => this.ctx?.log.error({ err: String(e) }, 'the wasi runtime could not be restarted'));
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
    this.tracked.set(w.id, { resolve, ctx });
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

  /** Asks core's image service for the image's Wasm layer (nodelet pulls; the runtime reads the file). */
  pullImage(image: string, opts: ImagePullOptions, ctx: PodContext): Promise<PulledImage> {
    if (!this.ctx) return Promise.reject(providerError('Unavailable', 'the wasi provider was not initialised'));
    return this.ctx.images.pull(image, { ...opts, acceptLayerTypes: WASM_LAYER_TYPES, signal: ctx.signal });
  }

  async startContainer(spec: ContainerSpec, ctx: PodContext): Promise<RunningContainer> {
    const c = await this.runtime();
    // Registered before the answer so that events during the start reach the pod.
    this.starting.set(spec.id, ctx);
    try {
      return this.track(await c.request('start', { spec }), ctx);
    } finally {
      this.starting.delete(spec.id);
    }
  }

  async listContainers(): Promise<AdoptableContainer[]> {
    const c = await this.runtime();
    const list = await c.request('list', {});
    return list.map((w) => ({ id: w.id, pod: w.pod, name: w.name, startedAt: new Date(w.startedAt), exit: w.exit ? fromWireExit(w.exit) : undefined }));
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
    this.listing ??= this.runtime()
      .then((c) => c.request('list', {}))
      .finally(() => {
        this.listing = undefined;
      });
    return this.listing;
  }

  async releaseContainer(id: string): Promise<void> {
    this.early.delete(id);
    const c = await this.runtime();
    await c.request('release', { containerId: id });
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

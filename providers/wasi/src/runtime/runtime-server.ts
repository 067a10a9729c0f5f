/**
 * The WASI runtime's server side: owns the running modules (through the
 * in-process {@link WasiProvider}, which calls the container and component
 * runners) and keeps the container table that outlives any one nodelet
 * connection. Serves the protocol of protocol.ts on a unix socket.
 *
 * A container in the table:
 *
 *   start ──► running ──exit──► exited (exit kept) ──release──► gone
 *                │                       ▲
 *                └──stop(grace)──────────┘
 */
import { createServer, type Server, type Socket } from 'node:net';
import { rmSync } from 'node:fs';
import {
  providerError,
  isProviderError,
  type ContainerSpec,
  type Logger,
  type PodContext,
  type ProviderContext,
  type ServiceClient,
  type ServiceProtocol,
  type ServiceRoute,
} from '@nodelet/plugin-api/v1';
import { WasiProvider, type WasiProviderOptions } from '../wasi-provider.ts';
import {
  PROTOCOL_MINOR,
  PROTOCOL_VERSION,
  lineReader,
  toWireExit,
  type AnswerLine,
  type AskLine,
  type NoteLine,
  type RequestLine,
  type ResponseLine,
  type WireContainer,
} from './protocol.ts';

interface Entry {
  readonly spec: ContainerSpec;
  readonly startedAt: Date;
  stop?: (graceMs: number) => Promise<void>;
  exit?: ReturnType<typeof toWireExit>;
}

/** How long the runtime waits for nodelet to answer where a connection goes. */
export const ROUTE_ASK_TIMEOUT_MS = 4000;

/** Options of {@link RuntimeServer}. */
export interface RuntimeServerOptions {
  /** The unix socket to listen on (replaced if a stale file is there). */
  readonly socketPath: string;
  /** The provider's root dir (components are transpiled under it). */
  readonly rootDir: string;
  readonly log: Logger;
  /** Options of the in-process provider that runs the modules. */
  readonly provider?: WasiProviderOptions;
}

/** The runtime's container table and socket server. */
export class RuntimeServer {
  private readonly provider: WasiProvider;
  private readonly table = new Map<string, Entry>();
  /** Starts in flight, by container id: `cancel` aborts one (its pod was deleted meanwhile). */
  private readonly starting = new Map<string, AbortController>();
  private readonly clients = new Set<Socket>();
  private server?: Server;
  private readonly abort = new AbortController();
  /** Clients that answer `route` asks, the last one asked. */
  private readonly routers: Socket[] = [];
  private nextAsk = 1;
  /** Asks in flight: their client, and what ends them (an answer; undefined: none came). */
  private readonly asks = new Map<number, { sock: Socket; done: (answer: AnswerLine | undefined) => void }>();
  private askProblem = '';

  constructor(private readonly o: RuntimeServerOptions) {
    this.provider = new WasiProvider({ ...o.provider, router: (host, port, client, protocol) => this.route(host, port, client, protocol) });
  }

  /** Initialises the provider and listens on the socket. */
  async start(): Promise<void> {
    const images = {
      pull: () => Promise.reject(providerError('NotSupported', 'the wasi runtime does not pull images: nodelet does')),
    } as unknown as ProviderContext['images'];
    await this.provider.init({ log: this.o.log, rootDir: this.o.rootDir, images, signal: this.abort.signal });
    // Shared threads up before the first start (nodelet's pulls warm the rest: the `warm` op).
    this.provider.warm('shared');
    rmSync(this.o.socketPath, { force: true });
    const server = createServer((sock) => this.serve(sock));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.o.socketPath, () => resolve());
    });
  }

  /** Stops every module and closes the socket (the runtime is being stopped on purpose). */
  async close(): Promise<void> {
    this.server?.close();
    for (const c of this.clients) c.destroy();
    await this.provider.shutdown();
    this.abort.abort();
    rmSync(this.o.socketPath, { force: true });
  }

  /** Containers in the table (running and exited-not-released). */
  get size(): number {
    return this.table.size;
  }

  private serve(sock: Socket): void {
    this.clients.add(sock);
    let greeted = false;
    const send = (line: ResponseLine | NoteLine) => {
      if (!sock.destroyed) sock.write(`${JSON.stringify(line)}\n`);
    };
    sock.on(
      'data',
      lineReader(
        (v) => {
          if (typeof v === 'object' && v !== null && 'answer' in v) return this.answered(v as AnswerLine);
          const req = v as RequestLine;
          if (!greeted && req.op !== 'hello') {
            send({ id: req.id, ok: false, error: { code: 'InvalidArgument', message: 'say hello first' } });
            return;
          }
          if (req.op === 'hello') {
            greeted = true;
            if (req.routes === true && !this.routers.includes(sock)) this.routers.push(sock);
          }
          this.handle(req, sock).then(
            (result) => send({ id: req.id, ok: true, result: result ?? null }),
            (e: unknown) => send({ id: req.id, ok: false, error: { code: isProviderError(e) ? String(e.code) : 'Internal', message: (e as Error).message } }),
          );
        },
        (line) => this.o.log.warn({ line: line.slice(0, 200) }, 'runtime: a line that is not JSON'),
      ),
    );
    sock.on('error', () => undefined);
    sock.on('close', () => {
      this.clients.delete(sock);
      const i = this.routers.indexOf(sock);
      if (i >= 0) this.routers.splice(i, 1);
      for (const a of [...this.asks.values()]) if (a.sock === sock) a.done(undefined);
    });
  }

  /**
   * Where a container's connection goes: asked of the last client that answers routes (nodelet);
   * as aimed when none is connected or it does not answer in time (logged once per problem).
   * Rejects with nodelet's error when it answers one.
   */
  private route(host: string, port: number, client: ServiceClient, protocol: ServiceProtocol): Promise<ServiceRoute> {
    const asGiven: ServiceRoute = { kind: 'connect', host, port };
    const sock = [...this.routers].reverse().find((c) => !c.destroyed);
    if (!sock) {
      this.noRoute('no nodelet is connected to answer where connections go: they go where they were aimed');
      return Promise.resolve(asGiven);
    }
    const id = this.nextAsk++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => done(undefined), ROUTE_ASK_TIMEOUT_MS);
      const done = (answer: AnswerLine | undefined) => {
        clearTimeout(timer);
        this.asks.delete(id);
        if (answer === undefined) {
          this.noRoute(`nodelet did not answer where a connection goes within ${ROUTE_ASK_TIMEOUT_MS} ms: it went where it was aimed`);
          return resolve(asGiven);
        }
        this.askProblem = '';
        if (answer.ok) resolve(answer.result);
        else reject(providerError(answer.error.code as 'Internal', answer.error.message));
      };
      this.asks.set(id, { sock, done });
      sock.write(`${JSON.stringify({ ask: id, op: 'route', host, port, protocol, client } satisfies AskLine)}\n`);
    });
  }

  private answered(line: AnswerLine): void {
    this.asks.get(line.answer)?.done(line);
  }

  private noRoute(problem: string): void {
    if (problem !== this.askProblem) this.o.log.warn({}, problem);
    this.askProblem = problem;
  }

  private broadcast(line: NoteLine): void {
    const text = `${JSON.stringify(line)}\n`;
    for (const c of this.clients) if (!c.destroyed) c.write(text);
  }

  private async handle(req: RequestLine, sock: Socket): Promise<unknown> {
    switch (req.op) {
      case 'hello':
        if (Math.floor(req.version) !== PROTOCOL_VERSION)
          throw providerError('InvalidArgument', `protocol version ${req.version} is not served (this runtime speaks ${PROTOCOL_VERSION})`);
        return { version: PROTOCOL_VERSION, minor: PROTOCOL_MINOR, pid: process.pid, runtimeVersion: this.provider.runtimeVersion };
      case 'start':
        return this.startContainer(req.spec, sock, req.podDir ?? '');
      case 'stop': {
        const e = this.table.get(req.containerId);
        if (!e) throw providerError('NotFound', `no container with id ${req.containerId}`);
        await e.stop?.(req.graceMs);
        return null;
      }
      case 'list':
        return [...this.table.entries()].map(([id, e]) => wire(id, e));
      case 'release': {
        const e = this.table.get(req.containerId);
        if (e && !e.exit) await e.stop?.(0);
        this.table.delete(req.containerId);
        return null;
      }
      case 'stats': {
        const s = await this.provider.stats(req.containerId);
        return { ...s, timestamp: s.timestamp.toISOString() };
      }
      case 'threads':
        return [...this.provider.threads()];
      case 'warm':
        this.provider.warm({ qosClass: req.qosClass });
        return null;
      case 'cancel':
        this.starting.get(req.containerId)?.abort();
        return null;
      case 'stream':
        return this.stream(req.containerId, req.kind, req.data);
      case 'resize': {
        const e = this.table.get(req.containerId);
        if (!e || e.exit) throw providerError('NotFound', `no running container with id ${req.containerId}`);
        return this.provider.resizeContainer(req.containerId, req.limits);
      }
      default:
        throw providerError('InvalidArgument', `unknown operation ${(req as { op: string }).op}`);
    }
  }

  /** `stream` (protocol 1.1): an attach session's stdin, forwarded chunk by chunk to the container's stdin pipe. */
  private async stream(containerId: string, kind: string, data: string | undefined): Promise<null> {
    if (kind !== 'stdin-open' && kind !== 'stdin') throw providerError('NotSupported', `stream ${kind} is not supported by this runtime`);
    const e = this.table.get(containerId);
    if (!e || e.exit) throw providerError('NotFound', `no running container with id ${containerId}`);
    await this.provider.writeStdin(containerId, kind === 'stdin' && data ? Buffer.from(data, 'base64') : undefined);
    return null;
  }

  private async startContainer(spec: ContainerSpec, sock: Socket, podDir: string): Promise<WireContainer> {
    if (this.table.has(spec.id) || this.starting.has(spec.id)) throw providerError('InvalidArgument', `a container with id ${spec.id} is already known`);
    const cancel = new AbortController();
    this.starting.set(spec.id, cancel);
    const log = this.o.log.child({ pod: `${spec.pod.namespace}/${spec.pod.name}`, container: spec.name });
    const ctx: PodContext = {
      log,
      // Events during the start go to the client that asked for it.
      event: (type, reason, message) => {
        if (!sock.destroyed) sock.write(`${JSON.stringify({ note: 'event', containerId: spec.id, type, reason, message } satisfies NoteLine)}\n`);
      },
      signal: AbortSignal.any([this.abort.signal, cancel.signal]),
      podDir,
    };
    let running;
    try {
      running = await this.provider.startContainer(spec, ctx);
    } finally {
      this.starting.delete(spec.id);
    }
    const entry: Entry = { spec, startedAt: running.startedAt, stop: (g) => running.stop(g) };
    this.table.set(spec.id, entry);
    log.info({ id: spec.id }, 'container started');
    void running.exit.then((x) => {
      entry.exit = toWireExit(x);
      entry.stop = undefined;
      log.info({ id: spec.id, exitCode: x.exitCode, reason: x.reason }, 'container ended');
      this.broadcast({ note: 'exit', containerId: spec.id, exit: entry.exit });
    });
    return wire(spec.id, entry);
  }
}

function wire(id: string, e: Entry): WireContainer {
  return {
    id,
    pod: { namespace: e.spec.pod.namespace, name: e.spec.pod.name, uid: e.spec.pod.uid },
    name: e.spec.name,
    startedAt: e.startedAt.toISOString(),
    exit: e.exit,
    restartCount: e.spec.restartCount,
  };
}

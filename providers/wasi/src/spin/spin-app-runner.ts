/**
 * Runs a Spin application (the `spin` RuntimeClass handler; see README.md "Spin applications"):
 *
 *   locked app (PulledImage.path) ─► parseLockedApp ─► variables resolved from the container's env
 *   each component an HTTP trigger names:
 *     its files copied under <pod dir>/spin/<container>/<component>/ ─► mounted read-only at /
 *     startComponent (component-runner.ts) on 127.0.0.1:<free port>, with its env, its variables
 *     and its key-value stores
 *   front server on the pod's IP (spinListenAddress: SPIN_HTTP_LISTEN_ADDR's port, else the first
 *   TCP containerPort, else 80):
 *     /.well-known/spin/health ─► 200 OK (as Spin answers it; for probes)
 *     request ─► SpinRouter.match(path) ─► 404 when no route
 *             ─► Spin's headers (spin-full-url, spin-path-info, …) ─► the component's server
 *
 * Each component keeps the serving of any http component (an instance per request, metrics,
 * containment). The container ends when one of its components ends (the others are stopped);
 * stopping it stops them all.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { providerError, type ContainerExit, type ContainerSpec, type ContainerStats, type EventRecorder, type Logger } from '@nodelet/plugin-api/v1';
import type { ComponentCache } from '../component-cache.ts';
import { startComponent, type ComponentRunOptions } from '../component-runner.ts';
import type { ListenAddress } from '../worker-protocol.ts';
import type { WasiContainer } from '../wasi-container.ts';
import { parseLockedApp, type SpinApp, type SpinComponent } from './locked-app.ts';
import { isSpinHeader, SpinRouter, spinRequestHeaders } from './spin-routes.ts';
import { appVariableValues, componentVariables, expandTemplate } from './spin-variables.ts';
import { AllowedHostError, parseAllowedHosts, type OutboundPolicy } from '../outbound-hosts.mjs';

// Not an ES import: node:http's namespace loads Node's bundled undici (eslint.config.js says why).
const { createServer, request: httpRequest } = process.getBuiltinModule('node:http');

/** Hop-by-hop headers a proxy does not forward (RFC 9110 7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** The port the Spin shim listens on without `SPIN_HTTP_LISTEN_ADDR` (containerd-shim-spin's 0.0.0.0:80). */
const SPIN_DEFAULT_PORT = 80;

/**
 * Where the app is served: the pod's IP (127.0.0.1 without a pod network) at the port of the
 * container's env `SPIN_HTTP_LISTEN_ADDR` (`0.0.0.0:80`: what spin-operator sets), else of its
 * first TCP containerPort, else 80 (containerd-shim-spin's default). The address part of
 * `SPIN_HTTP_LISTEN_ADDR` is not used: a pod is reached at its IP.
 */
export function spinListenAddress(spec: ContainerSpec): ListenAddress {
  const host = spec.network?.podIPs[0] ?? '127.0.0.1';
  const addr = spec.env.SPIN_HTTP_LISTEN_ADDR;
  if (addr !== undefined) {
    const port = Number(/:(\d+)$/.exec(addr)?.[1]);
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      throw providerError('InvalidArgument', `container ${spec.name}: SPIN_HTTP_LISTEN_ADDR ${JSON.stringify(addr)} is not <address>:<port>`);
    return { host, port };
  }
  return { host, port: spec.ports?.find((p) => p.protocol === 'TCP')?.containerPort ?? SPIN_DEFAULT_PORT };
}

/** Reads the locked app of a pulled Spin image; InvalidImage when it is not one. */
export async function readSpinApp(spec: ContainerSpec): Promise<SpinApp> {
  let text: string;
  try {
    text = await readFile(spec.image.path, 'utf8');
  } catch (e) {
    throw providerError('InvalidImage', `cannot read the locked app of image ${spec.image.image}: ${(e as Error).message}`, { cause: e });
  }
  return parseLockedApp(text, spec.image.image);
}

/** A free TCP port on loopback (the kernel's choice; released just before the component listens on it). */
async function freePort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((r, j) => s.once('error', j).listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Writes the component's files under `dir` (emptied first); the blobs come from the image. */
async function materialiseFiles(component: SpinComponent, spec: ContainerSpec, dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  for (const f of component.files) {
    const target = join(dir, f.path);
    await mkdir(dirname(target), { recursive: true });
    if (f.inline) {
      await writeFile(target, f.inline, { mode: 0o444 });
      continue;
    }
    const blob = spec.image.blobs?.[f.digest!];
    if (!blob)
      throw providerError(
        'InvalidImage',
        `image ${spec.image.image}: component ${JSON.stringify(component.id)} file ${f.path} has content ${f.digest}, which is in no layer of the image`,
      );
    await copyFile(blob, target);
  }
}

/** Options of {@link startSpinApp}: those of a component, and the transpile cache. */
export interface SpinRunOptions extends Omit<ComponentRunOptions, 'listen' | 'platform'> {
  readonly components: ComponentCache;
}

/**
 * Starts the Spin application of `spec.image`. Resolves once every component serves and the
 * front server listens; rejects with a branded error (and stops what was started) otherwise.
 */
export async function startSpinApp(
  spec: ContainerSpec,
  log: Logger,
  opts: SpinRunOptions,
  signal?: AbortSignal,
  events?: EventRecorder,
): Promise<WasiContainer> {
  const app = await readSpinApp(spec);
  const image = spec.image.image;
  if (app.otherTriggerTypes.length > 0)
    log.warn(
      { container: spec.name, triggers: app.otherTriggerTypes },
      `the Spin application's ${app.otherTriggerTypes.join(', ')} triggers are not run (nodelet runs http triggers)`,
    );
  if (app.httpTriggers.length === 0)
    throw providerError('InvalidImage', `image ${image}: the Spin application has no public http trigger`, { reason: 'InvalidSpinApp' });
  let router: SpinRouter;
  try {
    router = new SpinRouter(app.httpTriggers);
  } catch (e) {
    throw providerError('InvalidImage', `image ${image}: the Spin application has a bad route: ${(e as Error).message}`, { reason: 'InvalidSpinApp' });
  }
  for (const d of router.duplicates) log.warn({ container: spec.name, route: d }, 'two http triggers have this route: the later one serves it (as in Spin)');
  const front = spinListenAddress(spec);
  const values = appVariableValues(app, spec.env, spec.name);

  const started = new Map<string, { port: number; running: WasiContainer }>();
  const stopAll = () => Promise.all([...started.values()].map((c) => c.running.stop(0)));
  try {
    for (const id of new Set(router.routes.map((r) => r.component))) {
      const component = app.components.get(id)!;
      const blob = spec.image.blobs?.[component.source];
      if (!blob)
        throw providerError(
          'InvalidImage',
          `image ${image}: component ${JSON.stringify(id)} has source ${component.source}, which is in no layer of the image`,
        );
      const loaded = await opts.components.load({ ...spec.image, image: `${image} (component ${id})`, digest: component.source, path: blob, blobs: undefined });
      if (loaded.world !== 'http')
        throw providerError('InvalidImage', `image ${image}: component ${JSON.stringify(id)} of an http trigger does not export wasi:http/incoming-handler`);
      const variables = componentVariables(component, values, image);
      const outbound = componentOutbound(component, values, image);
      const filesDir = join(opts.dataDir, 'spin', spec.name, id);
      const mounts = component.files.length > 0 ? [{ name: `spin-files-${id}`, containerPath: '/', hostPath: filesDir, readOnly: true }] : [];
      if (mounts.length > 0) await materialiseFiles(component, spec, filesDir);
      const port = await freePort();
      const componentSpec: ContainerSpec = { ...spec, env: component.env, mounts };
      const running = await startComponent(
        componentSpec,
        loaded,
        log,
        {
          ...opts,
          listen: { host: '127.0.0.1', port },
          outbound,
          platform: (p) => ({ keyvalue: p.keyvalue, keyvalueAllowed: component.keyValueStores, variables }),
        },
        signal,
        events,
      );
      started.set(id, { port, running });
      log.debug({ container: spec.name, component: id, port }, 'Spin component started');
    }
  } catch (e) {
    await stopAll();
    throw e;
  }

  const server = createServer((req, res) => forward(req, res, router, started, log, spec.name));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(front.port, front.host, () => resolve());
    });
  } catch (e) {
    await stopAll();
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'EADDRINUSE')
      throw providerError('InvalidArgument', `container ${spec.name}: port ${front.port} on ${front.host} is already in use`, { reason: 'PortInUse' });
    throw providerError('Internal', `container ${spec.name}: cannot listen on ${front.host}:${front.port}: ${err.message}`, { cause: e });
  }
  log.info({ container: spec.name, app: app.name, routes: router.routes.map((r) => `${r.raw} → ${r.component}`), ...front }, 'Spin application serving');
  return spinContainer(spec, server, started);
}

/**
 * A component's `allowed_outbound_hosts` (templates expanded) as the allow-list of its outgoing
 * requests and sockets (outbound-hosts.mjs); none listed: nothing allowed, as in Spin. InvalidImage
 * for an entry that does not parse.
 */
function componentOutbound(component: SpinComponent, values: ReadonlyMap<string, string>, image: string): OutboundPolicy {
  const at = `component ${JSON.stringify(component.id)} allowed_outbound_hosts`;
  const entries = component.allowedOutboundHosts.map((e) => expandTemplate(e, values, image, at));
  try {
    return parseAllowedHosts(entries);
  } catch (e) {
    if (e instanceof AllowedHostError) throw providerError('InvalidImage', `image ${image}: ${at}: ${e.message}`, { reason: 'InvalidSpinApp' });
    throw e;
  }
}

/** Sends one request to the component its route names, with Spin's headers. */
function forward(
  req: IncomingMessage,
  res: ServerResponse,
  router: SpinRouter,
  started: ReadonlyMap<string, { port: number }>,
  log: Logger,
  container: string,
): void {
  const pathAndQuery = req.url ?? '/';
  const path = pathAndQuery.split('?')[0]!;
  if (path === '/.well-known/spin/health') {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('OK');
    return;
  }
  const m = router.match(path);
  const target = m && started.get(m.route.component);
  if (!m || !target) {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
    return;
  }
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP_BY_HOP.has(k) && !isSpinHeader(k)) headers[k] = v;
  Object.assign(headers, spinRequestHeaders(m, pathAndQuery, req.headers.host, { address: req.socket.remoteAddress, port: req.socket.remotePort }));
  const out = httpRequest({ host: '127.0.0.1', port: target.port, method: req.method, path: pathAndQuery, headers }, (back) => {
    const h: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(back.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) h[k] = v;
    res.writeHead(back.statusCode ?? 502, back.statusMessage, h);
    back.pipe(res);
    back.on('error', () => res.destroy());
  });
  out.on('error', (e) => {
    log.warn({ container, component: m.route.component, err: e.message }, 'Spin component did not answer');
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end('Bad Gateway');
    else res.destroy();
  });
  req.pipe(out);
  res.on('close', () => {
    if (!res.writableFinished) out.destroy();
  });
}

/** The container: ends when a component ends (the rest stopped with it), or when stopped. */
function spinContainer(spec: ContainerSpec, server: Server, started: ReadonlyMap<string, { running: WasiContainer }>): WasiContainer {
  const all = [...started.values()].map((c) => c.running);
  let stopping = false;
  const close = () =>
    new Promise<void>((r) => server.close(() => r())).then(
      () => undefined,
      () => undefined,
    );
  const exit: Promise<ContainerExit> = Promise.race(all.map((c) => c.exit)).then(async (first) => {
    server.closeAllConnections();
    await Promise.all([close(), ...all.map((c) => c.stop(0))]);
    return stopping ? { ...first, finishedAt: new Date() } : first;
  });
  return {
    id: spec.id,
    requests: all[0]?.requests,
    startedAt: all.reduce((t, c) => (c.startedAt > t ? c.startedAt : t), all[0]!.startedAt),
    exit,
    stats: (): ContainerStats => {
      const each = all.map((c) => c.stats());
      const cpu = each.reduce((n, s) => n + (s.cpu?.usageCoreNanoSeconds ?? 0), 0);
      return { timestamp: new Date(), cpu: { usageCoreNanoSeconds: cpu } };
    },
    async stop() {
      stopping = true;
      server.closeAllConnections();
      await Promise.all([close(), ...all.map((c) => c.stop(0))]);
      await exit;
    },
  };
}

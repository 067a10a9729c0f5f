/**
 * The kubelet API: HTTPS on `address:port` (`--address`, `--port`) and a plain
 * HTTP healthz on `healthzAddress:healthzPort` (`--healthz-bind-address`, `--healthz-port`).
 * There is no read-only port (upstream's 10255) and there never will be.
 *
 * Every HTTPS request, whatever its path (including /healthz and unknown
 * paths), goes through:
 *
 *   client cert (CN, O) / bearer token (TokenReview) / anonymous? ──none──► 401 Unauthorized  (authn.ts)
 *        │ user
 *   authorize(nodes/<subresource>, verb), then nodes/proxy for /pods, /healthz, /configz
 *        │                                ──no──► 403 Forbidden (user=…, …, subresource(s)=[…])  (authz.ts, webhook-authz.ts)
 *        │ yes                            └─error─► 500 Authorization error (user=…, …)
 *        │ yes
 *   known path, other method? ─────────────────────► 405 Method Not Allowed (method-guard.ts)
 *   route: /healthz → ok · /pods → PodList · /containerLogs/… (container-logs.ts)
 *          /attach|portForward/… → SPDY/3.1 upgrade (streaming.ts) · /exec|run/… → Status "not supported"
 *          /metrics, /metrics/resource, /stats/summary, /configz (stats-routes.ts)
 */
import type { AddressInfo } from 'node:net';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from '@nodelet/plugin-api/v1';
import { authenticateRequest, type AuthnOptions } from './authn.ts';
import { authorize, decodedPath, requestAttributes, type Authorizer } from './authz.ts';
import { registerStatsRoutes, type StatsRoutesOptions } from './stats-routes.ts';
import { registerContainerLogs, sendText } from './container-logs.ts';
import { errorStatus, installMethodGuard } from './method-guard.ts';
import { registerStreaming } from './streaming.ts';
import { podListJson } from './pod-list.ts';
import type { PodSource } from './pod-source.ts';
import { lazySchemaCompilers } from './lazy-schema-compilers.ts';

/** Serving certificate, key and client CA, PEM. */
export interface KubeletTls {
  /** Absent until a serving certificate exists (`serverTLSBootstrap` waiting for its CSR): handshakes fail meanwhile. */
  readonly cert?: string | Buffer;
  readonly key?: string | Buffer;
  /** The client CA (`--client-ca-file`): only certificates it signed are accepted. */
  readonly ca: string | Buffer;
}

/** Options of {@link createKubeletServer}. */
export interface KubeletServerOptions {
  readonly nodeName: string;
  readonly log: Logger;
  readonly pods: PodSource;
  readonly tls: KubeletTls;
  readonly address: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly healthzAddress: string;
  /** 0 picks a free port; `null` disables (upstream's `--healthz-port=0`). */
  readonly healthzPort: number | null;
  /** Decides authenticated requests (`alwaysAllow` or `webhookAuthorizer(...)`). */
  readonly authorizer: Authorizer;
  /** Bearer tokens and anonymous callers; default: client certificates only. */
  readonly authn?: AuthnOptions;
  /** The metrics, stats and configz endpoints; without it they are 404. */
  readonly stats?: StatsRoutesOptions;
  /** If set, log files served must lie under this directory (`<rootDir>/logs/pods`). */
  readonly logsRoot?: string;
  /** Follow: ms between checks when no change notification arrives (default 1000). */
  readonly followPollMs?: number;
}

/** The ports actually bound. */
export interface BoundPorts {
  readonly port: number;
  /** Undefined when the healthz port is disabled. */
  readonly healthzPort?: number;
}

/** A kubelet API server, not yet listening. */
export interface KubeletServer {
  /** The HTTPS app (for `inject` in tests). */
  readonly app: FastifyInstance;
  /** The healthz app, unless disabled. */
  readonly healthz?: FastifyInstance;
  /** Listens on both ports; resolves with the bound ports. */
  start(): Promise<BoundPorts>;
  /** Stops listening and ends open streams. */
  close(): Promise<void>;
  /** Swaps the serving certificate, key and client CA: new connections use them, open ones keep theirs. */
  updateTls(tls: KubeletTls): void;
}

/** Builds the HTTPS API and the healthz server (see the module comment). */
export function createKubeletServer(opts: KubeletServerOptions): KubeletServer {
  const app = createHttpsApp(opts);
  const healthz = opts.healthzPort === null ? undefined : createHealthzApp(opts.log);
  return {
    app,
    healthz,
    async start() {
      await app.listen({ host: opts.address, port: opts.port });
      let healthzPort: number | undefined;
      if (healthz && opts.healthzPort !== null) {
        await healthz.listen({ host: opts.healthzAddress, port: opts.healthzPort });
        healthzPort = (healthz.server.address() as AddressInfo).port;
      }
      return { port: (app.server.address() as AddressInfo).port, healthzPort };
    },
    async close() {
      await Promise.all([app.close(), healthz?.close()]);
    },
    updateTls(tls) {
      (app.server as unknown as { setSecureContext(o: object): void }).setSecureContext(secureContext(tls));
    },
  };
}

function secureContext(tls: KubeletTls): { cert?: string | Buffer; key?: string | Buffer; ca: string | Buffer; minVersion: 'TLSv1.2' } {
  return { ...(tls.cert && tls.key ? { cert: tls.cert, key: tls.key } : {}), ca: tls.ca, minVersion: 'TLSv1.2' };
}

function createHttpsApp(opts: KubeletServerOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: fastifyLogger(opts.log.child({ component: 'kubelet-api' })),
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: true,
    schemaController: lazySchemaCompilers(),
    https: { ...secureContext(opts.tls), requestCert: true, rejectUnauthorized: false },
  }) as unknown as FastifyInstance;
  const authn: AuthnOptions = opts.authn ?? { anonymous: false };
  app.addHook('onRequest', async (req, reply) => {
    const user = await authenticateRequest(req.raw, authn).catch((err: unknown) => {
      req.log.warn({ err: String(err), url: req.url }, 'kubelet API: unable to authenticate the request due to an error');
      return undefined;
    });
    if (!user) {
      req.log.debug({ url: req.url }, 'kubelet API: unauthenticated request refused');
      return sendText(reply, 401, 'Unauthorized');
    }
    const path = decodedPath(req.url.split('?')[0] ?? '/');
    const refused = await authorize(opts.authorizer, requestAttributes(user, req.method, path, opts.nodeName));
    if (refused) {
      const about = { url: req.url, user: user.name, subresources: refused.subresources };
      if (refused.status === 500) req.log.warn({ ...about, err: String(refused.cause) }, 'kubelet API: authorization failed');
      else req.log.debug(about, 'kubelet API: request forbidden');
      return sendText(reply, refused.status, refused.message);
    }
    return undefined;
  });
  installMethodGuard(app);
  app.get('/healthz', async (_req, reply) => sendText(reply, 200, 'ok'));
  app.get('/pods', async (_req, reply) => reply.type('application/json').send(podListJson(opts.pods.listPods())));
  registerContainerLogs(app, { pods: opts.pods, logsRoot: opts.logsRoot, followPollMs: opts.followPollMs });
  registerStreaming(app, { pods: opts.pods, logsRoot: opts.logsRoot, log: opts.log.child({ component: 'kubelet-api' }) });
  if (opts.stats) registerStatsRoutes(app, opts.stats);
  app.setNotFoundHandler((_req, reply) => sendText(reply, 404, '404 page not found'));
  app.setErrorHandler((err, req, reply) => {
    const status = errorStatus(err);
    if (status === 500) req.log.error({ err, url: req.url }, 'kubelet API: request failed');
    return sendText(reply, status, `${status === 500 ? 'internal error: ' : ''}${err instanceof Error ? err.message : String(err)}`);
  });
  app.addHook('onResponse', async (req, reply) => {
    req.log.debug({ method: req.method, url: req.url, status: reply.statusCode }, 'kubelet API request');
  });
  return app;
}

function createHealthzApp(log: Logger): FastifyInstance {
  const app = Fastify({
    loggerInstance: fastifyLogger(log.child({ component: 'healthz' })),
    logController: new LogController({ disableRequestLogging: true }),
    schemaController: lazySchemaCompilers(),
  }) as unknown as FastifyInstance;
  installMethodGuard(app);
  app.get('/healthz', async (_req, reply) => sendText(reply, 200, 'ok'));
  app.setNotFoundHandler((_req, reply) => sendText(reply, 404, '404 page not found'));
  app.setErrorHandler((err, _req, reply) => sendText(reply, errorStatus(err), err instanceof Error ? err.message : String(err)));
  return app;
}

/** The process logger is pino (core/logging); fastify wants it by its own type. */
function fastifyLogger(log: Logger): FastifyBaseLogger {
  return log as unknown as FastifyBaseLogger;
}

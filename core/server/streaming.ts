/**
 * `/exec`, `/attach`, `/portForward` and `/run` (any method).
 *
 *   /portForward ──SPDY/3.1 upgrade, `portforward.k8s.io`──► port-forward.ts (dials the pod's IP)
 *   /attach      ──SPDY/3.1 upgrade, `v4.channel.k8s.io`…──► attach.ts (output from the log, stdin via the provider)
 *   /exec, /run  ──► Status "not supported" (no provider streams exec yet)
 *
 * The apiserver reaches these over SPDY/3.1 even when kubectl speaks WebSocket
 * to it (it tunnels port-forward and translates exec/attach, KEP-4006;
 * nodelet does not declare the ExtendWebSocketsToKubelet node feature).
 *
 * Refusals answer without upgrading, with a `metav1.Status` body. Why a
 * Status: kubectl (client-go) decodes a non-101 answer's body as a Status
 * when it can, over SPDY directly and over WebSocket through the apiserver's
 * stream translator, and prints
 *
 *   Error from server (BadRequest): not supported by provider "wasi": exec
 *
 * (a plain-text body would print as `unable to upgrade connection: …`).
 *
 * Paths, as upstream: /exec|attach|run/{namespace}/{pod}[/{uid}]/{container},
 * /portForward/{namespace}/{pod}[/{uid}].
 */
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '@nodelet/plugin-api/v1';
import { CATALOGUE } from '../errors/index.ts';
import { containerLogFile, assertInside } from '../logs/index.ts';
import { findPod, hasContainer } from './container-logs.ts';
import type { PodSource } from './pod-source.ts';
import { acceptSpdy, negotiate, protocolOffers, routeUpgrades, wantsSpdy } from './stream-upgrade.ts';
import type { SpdySession, SpdyStream } from './spdy-session.ts';
import { PORT_FORWARD_PROTOCOLS, portForwardStreams } from './port-forward.ts';
import { ATTACH_PROTOCOLS, attachOptions, attachStreams } from './attach.ts';

const ACTIONS = { exec: 'exec', attach: 'attach', run: 'run', portForward: 'portforward' } as const;
type Route = keyof typeof ACTIONS;

type Reason = 'BadRequest' | 'NotFound';
const CODES: Record<Reason, number> = { BadRequest: 400, NotFound: 404 };

/** What the streaming routes need. */
export interface StreamingDeps {
  readonly pods: PodSource;
  /** If set, attach reads only log files under this directory. */
  readonly logsRoot?: string;
  readonly log?: Logger;
}

/** Sends a `metav1.Status` failure. */
function sendStatus(reply: FastifyReply, reason: Reason, message: string): FastifyReply {
  const code = CODES[reason];
  return reply.code(code).type('application/json').send({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
  });
}

/** The message for an unsupported streaming action, e.g. `not supported by provider "wasi": exec`. */
function notSupportedMessage(provider: string, action: string): string {
  return `${CATALOGUE.NDL_API_NOT_SUPPORTED} ${JSON.stringify(provider)}: ${action}`;
}

/** Registers the four streaming prefixes on `app` (and routes its upgrade requests). */
export function registerStreaming(app: FastifyInstance, deps: StreamingDeps): void {
  const sessions = new Set<SpdySession>();
  routeUpgrades(app, sessions);
  for (const route of Object.keys(ACTIONS) as Route[]) {
    app.all(`/${route}/*`, (req, reply) => serve(deps, sessions, route, req, reply));
  }
}

function serve(deps: StreamingDeps, sessions: Set<SpdySession>, route: Route, req: FastifyRequest, reply: FastifyReply) {
  const { pods } = deps;
  const action = ACTIONS[route];
  const parts = ((req.params as { '*': string })['*'] ?? '').split('/').filter((s) => s !== '');
  const wantsContainer = route !== 'portForward';
  const [namespace, podName] = parts;
  const container = wantsContainer ? parts[parts.length - 1] : undefined;
  const okLength = wantsContainer ? parts.length === 3 || parts.length === 4 : parts.length === 2 || parts.length === 3;
  if (!okLength || !namespace || !podName) return sendStatus(reply, 'BadRequest', `invalid ${action} path ${JSON.stringify(req.url.split('?')[0])}`);
  const pod = findPod(pods, namespace, podName);
  if (!pod) return sendStatus(reply, 'NotFound', `pod ${JSON.stringify(podName)} does not exist`);
  const name = container ?? pod.spec?.containers?.[0]?.name;
  if (container !== undefined && !hasContainer(pod, container)) {
    return sendStatus(reply, 'NotFound', `container ${JSON.stringify(container)} not found in pod ${JSON.stringify(podName)}`);
  }
  const target = name === undefined ? undefined : pods.findContainer(namespace, podName, name);
  const provider = target?.providerName ?? pod.spec?.runtimeClassName ?? 'unknown';
  if (route === 'exec' || route === 'run') {
    if (target?.exec) {
      return sendStatus(reply, 'BadRequest', `not supported by nodelet yet: ${action} streaming (provider ${JSON.stringify(provider)} implements it)`);
    }
    return sendStatus(reply, 'BadRequest', notSupportedMessage(provider, action));
  }
  const query = new URL(req.url, 'https://kubelet').searchParams;
  if (route === 'attach') {
    const what = `container ${JSON.stringify(container)} in pod ${JSON.stringify(podName)}`;
    if (!target?.running) return sendStatus(reply, 'BadRequest', `${what} is not running`);
    const opts = attachOptions(query);
    if (!opts) return sendStatus(reply, 'BadRequest', 'you must specify at least 1 of stdin, stdout, stderr');
    if (opts.stdin && !target.attach) return sendStatus(reply, 'BadRequest', notSupportedMessage(provider, 'attach stdin'));
    const protocol = upgradeProtocol(req, reply, ATTACH_PROTOCOLS);
    if (!protocol) return reply;
    const logFile = containerLogFile(target.logDir, target.restartCount);
    if (deps.logsRoot !== undefined) assertInside(path.resolve(deps.logsRoot), path.resolve(logFile));
    const restartCount = target.restartCount;
    let handler: ((s: SpdyStream) => void) | undefined;
    const session = acceptSpdy(req, reply, protocol, sessions, (s) => handler?.(s), deps.log);
    handler = attachStreams(session, protocol, opts, {
      logFile,
      exited: target.exited,
      isWriting: () => {
        const t = pods.findContainer(namespace, podName, name!);
        return t !== undefined && t.running && t.restartCount === restartCount;
      },
      attach: target.attach,
      log: deps.log,
    });
    return reply;
  }
  const protocol = upgradeProtocol(req, reply, PORT_FORWARD_PROTOCOLS);
  if (!protocol) return reply;
  const host = pods.podAddress?.(pod) ?? (pod.status?.podIP || '127.0.0.1');
  acceptSpdy(req, reply, protocol, sessions, portForwardStreams({ host, podName, podUid: pod.metadata?.uid ?? '', log: deps.log }), deps.log);
  return reply;
}

/** The negotiated subprotocol, or undefined after answering the refusal (not an upgrade, or no common protocol). */
function upgradeProtocol(req: FastifyRequest, reply: FastifyReply, supported: readonly string[]): string | undefined {
  if (!wantsSpdy(req)) {
    sendStatus(reply, 'BadRequest', `${CATALOGUE.NDL_API_UPGRADE}: missing upgrade headers in request (SPDY/3.1 is required)`);
    return undefined;
  }
  const offers = protocolOffers(req.raw);
  const protocol = negotiate(offers, supported);
  if (!protocol) {
    sendStatus(
      reply,
      'BadRequest',
      `${CATALOGUE.NDL_API_UPGRADE}: unable to negotiate protocol: client supports ${JSON.stringify(offers)}, server accepts ${JSON.stringify(supported)}`,
    );
  }
  return protocol;
}

/**
 * `/exec`, `/attach`, `/portForward` and `/run` (any method). nodelet does not
 * serve streams yet, so these answer without upgrading, with a `metav1.Status`
 * body. Why a Status: kubectl (client-go) decodes a non-101 answer's body as a
 * Status when it can, over SPDY directly and over WebSocket through the
 * apiserver's stream translator, and prints
 *
 *   Error from server (BadRequest): not supported by provider "wasi": exec
 *
 * (a plain-text body would print as `unable to upgrade connection: …`).
 *
 * Paths, as upstream: /exec|attach|run/{namespace}/{pod}[/{uid}]/{container},
 * /portForward/{namespace}/{pod}[/{uid}].
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CATALOGUE } from '../errors/index.ts';
import { findPod, hasContainer } from './container-logs.ts';
import type { PodSource } from './pod-source.ts';

const ACTIONS = { exec: 'exec', attach: 'attach', run: 'run', portForward: 'portforward' } as const;
type Route = keyof typeof ACTIONS;

type Reason = 'BadRequest' | 'NotFound';
const CODES: Record<Reason, number> = { BadRequest: 400, NotFound: 404 };

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

/** Registers the four streaming prefixes on `app`. */
export function registerStreaming(app: FastifyInstance, pods: PodSource): void {
  for (const route of Object.keys(ACTIONS) as Route[]) {
    app.all(`/${route}/*`, (req, reply) => refuse(pods, route, req, reply));
  }
}

function refuse(pods: PodSource, route: Route, req: FastifyRequest, reply: FastifyReply) {
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
  if (target?.exec && (route === 'exec' || route === 'run')) {
    return sendStatus(reply, 'BadRequest', `not supported by nodelet yet: ${action} streaming (provider ${JSON.stringify(provider)} implements it)`);
  }
  return sendStatus(reply, 'BadRequest', notSupportedMessage(provider, action));
}

/**
 * The provider's end of a container's route port (worker/service-route.mjs asks on the other):
 * each question is answered with the Service resolver's route for the container's pod, in
 * nodelet's process from `ProviderContext.services` directly, in the external runtime through
 * nodelet over the runtime's socket (runtime/runtime-server.ts). One MessageChannel per
 * container that can connect out (components, preview1 modules importing
 * `wasi_experimental_http`); closed when the container ends.
 *
 *   worker ──{id, host, port}──────────────► answer ──route──► {id, route} ──► worker
 *   worker ──{id, host, port, reply: SAB}──► answer ──route──► JSON into the SAB, Atomics.notify
 */
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { ServiceClient, ServiceProtocol, ServiceResolver, ServiceRoute } from '@nodelet/plugin-api/v1';
import { answerSync } from './worker/service-route.mjs';
import type { RouteAsk, RouteReply, WorkerRoute } from './worker-protocol.ts';

/** Where a connection goes, asked by the provider for one container (sync in nodelet, async through the runtime's socket). */
export type OutboundRouter = (host: string, port: number, client: ServiceClient, protocol: ServiceProtocol) => ServiceRoute | Promise<ServiceRoute>;

/** The router of a {@link ServiceResolver} (`ProviderContext.services`). */
export function resolverRouter(services: ServiceResolver): OutboundRouter {
  return (host, port, client, protocol) => services.route(host, port, client, protocol);
}

/** A container's route port: `port` goes to the worker (transferred), `close` when the container ends. */
export interface RouteChannel {
  readonly port: MessagePort;
  close(): void;
}

/** Opens the route port of a container of `client`'s pod, answered by `router`. */
export function openRouteChannel(router: OutboundRouter, client: ServiceClient): RouteChannel {
  const { port1, port2 } = new MessageChannel();
  port1.on('message', (ask: RouteAsk) => {
    const send = (route: WorkerRoute) => {
      if (ask.reply) answerSync(ask.reply, route);
      else port1.postMessage({ id: ask.id, route } satisfies RouteReply);
    };
    let answer: ServiceRoute | Promise<ServiceRoute>;
    try {
      answer = router(ask.host, ask.port, client, ask.protocol ?? 'TCP');
    } catch (e) {
      return send({ kind: 'error', message: (e as Error).message });
    }
    if (answer instanceof Promise) answer.then(send, (e: unknown) => send({ kind: 'error', message: (e as Error).message }));
    else send(answer);
  });
  // The worker's end keeps nothing alive; the container's worker does.
  port1.unref();
  return { port: port2, close: () => port1.close() };
}

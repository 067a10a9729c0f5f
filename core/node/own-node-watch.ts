/**
 * The node's own Node from one informer: a `ListWatch` on `/api/v1/nodes` with
 * `fieldSelector=metadata.name=<node>`, as upstream's kubelet keeps its node lister (the Node
 * authorizer lets a node list and watch its own Node with that selector). The node controller reads
 * it back on every status tick instead of a GET: on a fleet of idle nodes that GET was one request
 * every 10 s per node, as many as the Lease's (bench/README.md, "A fleet of nodes").
 *
 * While the informer has not listed, or after its list or watch failed and until it lists again,
 * {@link OwnNodeWatch.get} returns undefined and the controller falls back to a GET. A failed list
 * or watch is restarted after a second, doubling up to 30 s while it keeps failing.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import { apiMessage, ListWatch, type KubeClients } from '../kube/index.ts';

/** The node's own Node as its informer last saw it. */
export interface OwnNodeWatch {
  /** The cached Node; undefined before the first list and while the informer is failing. */
  get(): V1Node | undefined;
  stop(): void;
}

const RESTART_MS = 1000;
const MAX_RESTART_MS = 30_000;

/** Starts the informer of Node `name`. */
export function watchOwnNode(clients: Pick<KubeClients, 'transport' | 'core'>, name: string, log: Logger): OwnNodeWatch {
  const fieldSelector = `metadata.name=${name}`;
  const informer = new ListWatch<V1Node>(clients.transport, '/api/v1/nodes', () => clients.core.listNode({ fieldSelector }), { fieldSelector });
  let healthy = false;
  let stopped = false;
  let restartMs = RESTART_MS;
  let timer: NodeJS.Timeout | undefined;
  const start = () =>
    informer.start().then(
      () => {
        restartMs = RESTART_MS;
        healthy = true;
      },
      () => undefined,
    );
  // start() rejects when its list failed, and 'error' is emitted then too: one restart per failure.
  informer.on('error', (e) => {
    healthy = false;
    if (stopped) return;
    const ms = restartMs;
    restartMs = Math.min(MAX_RESTART_MS, restartMs * 2);
    log.warn({ err: apiMessage(e), retryInMs: ms }, 'own Node list/watch failed, restarting (status ticks read the Node with a GET meanwhile)');
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (!stopped) void start();
    }, ms);
    timer.unref();
  });
  void start();
  return {
    get: () => (healthy ? informer.get(name) : undefined),
    stop() {
      stopped = true;
      healthy = false;
      clearTimeout(timer);
      informer.stop();
    },
  };
}

/**
 * Every Node of the cluster, from one informer (a `ListWatch` on `/api/v1/nodes`), for the pod
 * routes. The Node authorizer lets a kubelet read only its own Node (Kubernetes 1.32+,
 * AuthorizeNodeWithSelectors), so the cluster grants the nodes list and watch on Nodes by RBAC
 * (deploy/rbac/pod-routes.yaml); a 403 is logged as an error saying so. A failed list or watch is
 * restarted after a second, doubling up to 30 s while it keeps failing.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import { apiMessage, apiStatus, ListWatch, type KubeClients } from '../kube/index.ts';

/** The Nodes as the pod routes see them (tests fake it). */
export interface NodeSource {
  /** Starts watching; `changed` runs after the first list and on every later add, update or delete. */
  start(changed: () => void): void;
  /** True once the first list answered. */
  synced(): boolean;
  /** The Nodes in the cache. */
  list(): V1Node[];
  stop(): void;
}

const RESTART_MS = 1000;
const MAX_RESTART_MS = 30_000;

/** The Nodes through the API server. */
export function apiNodeSource(clients: Pick<KubeClients, 'transport' | 'core'>, log: Logger): NodeSource {
  const informer = new ListWatch<V1Node>(clients.transport, '/api/v1/nodes', () => clients.core.listNode());
  let listed = false;
  let stopped = false;
  let restartMs = RESTART_MS;
  let timer: NodeJS.Timeout | undefined;
  return {
    start(changed) {
      const notify = () => {
        if (listed && !stopped) changed();
      };
      const start = () =>
        informer.start().then(
          () => {
            restartMs = RESTART_MS;
            if (!listed) {
              listed = true;
              notify();
            }
          },
          () => undefined,
        );
      informer.on('add', notify);
      informer.on('update', notify);
      informer.on('delete', notify);
      // start() rejects when its list failed, and 'error' is emitted then too: one restart per failure.
      informer.on('error', (e) => {
        if (stopped) return;
        const ms = restartMs;
        restartMs = Math.min(MAX_RESTART_MS, restartMs * 2);
        if (apiStatus(e) === 403)
          log.error(
            { err: apiMessage(e), retryInMs: ms },
            'pod routes: this node may not list and watch Nodes; grant it (kubectl apply -f deploy/rbac/pod-routes.yaml), retrying',
          );
        else log.warn({ err: apiMessage(e), retryInMs: ms }, 'Node list/watch failed, restarting');
        clearTimeout(timer);
        timer = setTimeout(() => {
          if (!stopped) void start();
        }, ms);
        timer.unref();
      });
      void start();
    },
    synced: () => listed,
    list: () => informer.list(),
    stop() {
      stopped = true;
      clearTimeout(timer);
      informer.stop();
    },
  };
}

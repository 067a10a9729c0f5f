/**
 * The real {@link StartObjectWatch}: a `ListWatch` (core/kube) on one
 * ConfigMap or Secret (`fieldSelector=metadata.name=<name>` in its namespace),
 * which the Node authorizer allows a kubelet for objects its pods refer to.
 * A failed list or watch is restarted after a second, as the pod source does —
 * except while the first list has not succeeded: then after 20 ms, doubling up
 * to the second. The Node authorizer learns that a pod is bound to this node
 * from its own informer, so the list made for a pod nodelet just saw bound can
 * be refused (403) for a few milliseconds; upstream's reflector waits 800 ms
 * before it lists again, and in a burst every pod of the namespace waited for it
 * (bench/results/, "The Node authorizer race").
 */
import type { V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import { ListWatch, type KubeClients } from '../kube/index.ts';
import type { SingleObjectWatch, StartObjectWatch, WatchedKind } from './object-watch-manager.ts';
import { BINDING_LAG_FIRST_RETRY_MS } from './binding-lag-retry.ts';

const RETRY_MS = 1000;
/** The first retry of a first list that failed (the binding lag's); doubled per failure up to {@link RETRY_MS}. */
const FIRST_LIST_RETRY_MS = BINDING_LAG_FIRST_RETRY_MS;

/** Watches single ConfigMaps/Secrets through the API server. */
export function apiObjectWatch(clients: Pick<KubeClients, 'transport' | 'core'>, log: Logger): StartObjectWatch {
  return (kind: WatchedKind, namespace: string, name: string, changed: () => void): SingleObjectWatch<V1ConfigMap | V1Secret> => {
    const fieldSelector = `metadata.name=${name}`;
    let listed = false;
    let stopped = false;
    let firstListRetryMs = FIRST_LIST_RETRY_MS;
    let resolveSynced!: () => void;
    const synced = new Promise<void>((r) => (resolveSynced = r));
    const markListed = () => {
      if (listed || stopped) return;
      listed = true;
      resolveSynced();
    };
    const listFn = async () => {
      const list = await (kind === 'configmaps'
        ? clients.core.listNamespacedConfigMap({ namespace, fieldSelector })
        : clients.core.listNamespacedSecret({ namespace, fieldSelector }));
      // Reads are served once the list is in the informer's cache (it is put there as this resolves), not
      // once the watch is open too: the watch resumes from the list's resourceVersion, so no change is
      // lost meanwhile, and when the watch failed under a burst (a relist 1 s later) every pod waited.
      // A failing watch does not empty the cache, so the list stays readable until the next one.
      setImmediate(markListed);
      return list;
    };
    const informer = new ListWatch<V1ConfigMap | V1Secret>(clients.transport, `/api/v1/namespaces/${namespace}/${kind}`, listFn, { fieldSelector });
    // start() rejects when its list failed; the 'error' callback restarts it, and synced waits for a good list.
    const start = () => informer.start().then(markListed, () => undefined);
    const notify = () => {
      if (listed && !stopped) changed();
    };
    informer.on('add', notify);
    informer.on('update', notify);
    informer.on('delete', notify);
    informer.on('error', (e) => {
      if (stopped) return;
      const ms = listed ? RETRY_MS : firstListRetryMs;
      if (!listed) firstListRetryMs = Math.min(RETRY_MS, firstListRetryMs * 2);
      log.debug({ object: `${kind}/${namespace}/${name}`, err: String(e), retryInMs: ms }, 'object watch failed, restarting');
      setTimeout(() => {
        if (!stopped) void start();
      }, ms).unref();
    });
    void start();
    return {
      synced,
      current: () => informer.get(name, namespace),
      stop: () => {
        stopped = true;
        informer.stop();
      },
    };
  };
}

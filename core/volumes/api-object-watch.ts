/**
 * The real {@link StartObjectWatch}: a client-node `ListWatch` on one
 * ConfigMap or Secret (`fieldSelector=metadata.name=<name>` in its namespace),
 * which the Node authorizer allows a kubelet for objects its pods refer to.
 * A failed list or watch is restarted after a second, as the pod source does.
 */
import * as k8s from '@kubernetes/client-node';
import type { V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import type { KubeClients } from '../kube/index.ts';
import type { SingleObjectWatch, StartObjectWatch, WatchedKind } from './object-watch-manager.ts';

const RETRY_MS = 1000;

/** Watches single ConfigMaps/Secrets through the API server. */
export function apiObjectWatch(clients: Pick<KubeClients, 'kc' | 'core'>, log: Logger): StartObjectWatch {
  return (kind: WatchedKind, namespace: string, name: string, changed: () => void): SingleObjectWatch<V1ConfigMap | V1Secret> => {
    const fieldSelector = `metadata.name=${name}`;
    let listOk = false;
    const listFn = async (): Promise<k8s.KubernetesListObject<V1ConfigMap | V1Secret>> => {
      const list = await (kind === 'configmaps'
        ? clients.core.listNamespacedConfigMap({ namespace, fieldSelector })
        : clients.core.listNamespacedSecret({ namespace, fieldSelector }));
      listOk = true;
      return list;
    };
    const informer = new k8s.ListWatch<V1ConfigMap | V1Secret>(
      `/api/v1/namespaces/${namespace}/${kind}`,
      new k8s.Watch(clients.kc),
      listFn,
      false,
      undefined,
      fieldSelector,
    );
    let listed = false;
    let stopped = false;
    let resolveSynced!: () => void;
    const synced = new Promise<void>((r) => (resolveSynced = r));
    // ListWatch.start() resolves even when its list failed (it reports that as an error): synced waits for a good list.
    const start = () =>
      informer.start().then(
        () => {
          if (listOk && !listed) {
            listed = true;
            resolveSynced();
          }
        },
        () => undefined,
      );
    const notify = () => {
      if (listed && !stopped) changed();
    };
    informer.on('add', notify);
    informer.on('update', notify);
    informer.on('delete', notify);
    informer.on('error', (e) => {
      if (stopped) return;
      log.debug({ object: `${kind}/${namespace}/${name}`, err: String(e) }, 'object watch failed, restarting in 1s');
      setTimeout(() => {
        if (!stopped) void start();
      }, RETRY_MS).unref();
    });
    void start();
    return {
      synced,
      current: () => informer.get(name, namespace),
      stop: () => {
        stopped = true;
        void informer.stop().catch(() => undefined);
      },
    };
  };
}

/**
 * The kubelet plugin registration of this node: one PluginManager watching
 * `<root-dir>/plugins_registry`, with the `CSIPlugin` handler added here.
 * Other plugin types (device plugins) add theirs with
 * `registration.manager.addHandler(type, handler)` — before or after start.
 *
 *   startPluginRegistration ──► startCsi (recover CSI refcounts, register the
 *                               CSI volume plugin, add the CSIPlugin handler)
 *                           ──► manager.start (walk + watch + reconcile)
 *
 * Start it after the Node is registered (drivers write to the Node and CSINode
 * at registration) and before pods are synced or orphans cleaned up.
 */
import type { Logger } from '@nodelet/plugin-api/v1';
import type { NodeletOptions } from '../config/options.ts';
import type { KubeClients } from '../kube/client.ts';
import { PluginManager, type PluginHandler, type PluginLogger } from '../pluginmanager/plugin-handler.ts';
import { startCsi, type Csi } from '../volumes/csi/index.ts';

/** The running plugin registration. */
export interface PluginRegistration {
  readonly manager: PluginManager;
  readonly csi: Csi;
  /** Stops watching (registered plugins stay registered, as upstream) and closes CSI driver connections. */
  stop(): Promise<void>;
}

/** Creates the manager on `o.pluginsRegistryDir`, adds the CSI handler and starts it. */
export async function startPluginRegistration(
  o: Pick<NodeletOptions, 'pluginsRegistryDir' | 'pluginsDir' | 'podsDir' | 'nodeName'>,
  clients: KubeClients | undefined,
  log: Logger,
  handlers: Readonly<Record<string, PluginHandler>> = {},
): Promise<PluginRegistration> {
  const manager = new PluginManager({ dir: o.pluginsRegistryDir, log: log.child({ component: 'plugin-manager' }) as unknown as PluginLogger });
  const csi = await startCsi({ clients, options: o, nodeName: o.nodeName, log, pluginManager: manager });
  // Handlers are in place before the first walk, so sockets present at start register at once.
  for (const [type, handler] of Object.entries(handlers)) manager.addHandler(type, handler);
  await manager.start();
  return {
    manager,
    csi,
    async stop() {
      await manager.stop();
      csi.stop();
    },
  };
}

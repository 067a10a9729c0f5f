/**
 * The kubelet plugin registration of this node: one PluginManager watching
 * `<root-dir>/plugins_registry`, with the handlers the composition root built
 * (`{ [CSI_PLUGIN]: csi.handler, [DEVICE_PLUGIN]: devices.handler }`).
 *
 *   startPluginRegistration ──► addHandler(type, handler) for each
 *                           ──► manager.start (walk + watch + reconcile)
 *
 * Start it after the Node is registered (drivers write to the Node and CSINode
 * at registration) and before pods are synced or orphans cleaned up.
 */
import type { Logger } from '@nodelet/plugin-api/v1';
import type { NodeletOptions } from '../config/index.ts';
import { PluginManager, type PluginHandler } from '../pluginmanager/index.ts';

/** The running plugin registration. */
export interface PluginRegistration {
  readonly manager: PluginManager;
  /** Stops watching (registered plugins stay registered, as upstream). */
  stop(): Promise<void>;
}

/** Creates the manager on `o.pluginsRegistryDir`, adds `handlers` (by plugin type) and starts it. */
export async function startPluginRegistration(
  o: Pick<NodeletOptions, 'pluginsRegistryDir'>,
  log: Logger,
  handlers: Readonly<Record<string, PluginHandler>>,
): Promise<PluginRegistration> {
  const manager = new PluginManager({ dir: o.pluginsRegistryDir, log: log.child({ component: 'plugin-manager' }) });
  // Handlers are in place before the first walk, so sockets present at start register at once.
  for (const [type, handler] of Object.entries(handlers)) manager.addHandler(type, handler);
  await manager.start();
  return { manager, stop: () => manager.stop() };
}

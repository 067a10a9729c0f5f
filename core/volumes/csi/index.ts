/**
 * CSI on this node: the `CSIPlugin` registration handler (driver registry,
 * Node/CSINode updates) and the `kubernetes.io/csi` volume plugin.
 *
 *   startCsi ──► StageRefs.recover(pods dir, plugins dir)
 *            ──► sharedVolumePlugins().register(CsiVolumePlugin)
 *            ──► pluginManager.addHandler('CSIPlugin', handler)
 *                  handler: driver registered → unstage its orphaned volumes
 *
 * Call it before pods are synced or cleaned up (the refcounts must be
 * recovered first) and before the plugin manager starts.
 */
import type { Logger } from '@nodelet/plugin-api/v1';
import type { KubeClients } from '../../kube/client.ts';
import type { PluginHandler } from '../../pluginmanager/plugin-handler.ts';
import { sharedVolumePlugins } from '../prepare.ts';
import type { VolumePluginRegistry } from '../plugin-registry.ts';
import { CsiDriverRegistry } from './csi-driver-registry.ts';
import { csiPluginHandler } from './csi-plugin-handler.ts';
import { CsiVolumePlugin } from './csi-volume-plugin.ts';
import { nodeInfoApi } from './node-info-api.ts';
import { NodeInfoManager } from './node-info-manager.ts';
import { StageRefs } from './stage-refs.ts';
import { csiVolumeApi } from './volume-api.ts';

/** Options of {@link startCsi}. */
export interface StartCsiOptions {
  /** Absent in standalone mode. */
  readonly clients?: Pick<KubeClients, 'core' | 'storage'>;
  readonly options: { readonly podsDir: string; readonly pluginsDir: string };
  readonly nodeName: string;
  readonly log: Logger;
  /** Where to add the `CSIPlugin` handler (anything with `addHandler`). */
  readonly pluginManager?: { addHandler(type: string, handler: PluginHandler): void };
  /** Defaults to the shared registry used by prepareVolumes/teardownVolumes. */
  readonly volumePlugins?: VolumePluginRegistry;
}

/** The running CSI parts. */
export interface Csi {
  readonly drivers: CsiDriverRegistry;
  readonly volumePlugin: CsiVolumePlugin;
  readonly handler: PluginHandler;
  /** Closes the driver connections. */
  stop(): void;
}

/** Sets CSI up; see the module comment for the order. */
export async function startCsi(o: StartCsiOptions): Promise<Csi> {
  const log = o.log.child({ component: 'csi' });
  const drivers = new CsiDriverRegistry();
  const refs = new StageRefs();
  await refs.recover(o.options.podsDir, o.options.pluginsDir, (where, err) => log.warn({ where, err: String(err) }, 'unreadable CSI volume data, skipped'));
  const volumePlugin = new CsiVolumePlugin({
    drivers, refs, pluginsDir: o.options.pluginsDir, nodeName: o.nodeName, log,
    api: o.clients ? csiVolumeApi(o.clients) : undefined,
  });
  const registry = o.volumePlugins ?? sharedVolumePlugins();
  if (!registry.list().some((p) => p.pluginName === volumePlugin.pluginName)) registry.register(volumePlugin);
  const handler = csiPluginHandler({
    drivers, log,
    nodeInfo: o.clients ? new NodeInfoManager(nodeInfoApi(o.clients), o.nodeName) : undefined,
    onRegistered: (driver) => void volumePlugin.unstageOrphans(driver),
  });
  o.pluginManager?.addHandler('CSIPlugin', handler);
  return { drivers, volumePlugin, handler, stop: () => drivers.close() };
}

export { CsiDriverRegistry, CsiVolumePlugin, csiPluginHandler, NodeInfoManager, StageRefs };

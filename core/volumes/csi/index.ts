/**
 * CSI on this node: the `CSIPlugin` registration handler (driver registry,
 * Node/CSINode updates) and the `kubernetes.io/csi` volume plugin.
 *
 *   startCsi ──► StageRefs.recover(pods dir, plugins dir)
 *            ──► { volumePlugin, handler }
 *                  volumePlugin → the root's volume plugin list (core/agent/volume-plugins.ts)
 *                  handler      → the root's plugin registration handlers (CSI_PLUGIN);
 *                                 driver registered → unstage its orphaned volumes
 *
 * Call it before pods are synced or cleaned up (the refcounts must be
 * recovered first) and before the plugin manager starts. It registers
 * nothing itself: the composition root passes both parts on.
 */
import type { Logger } from '@nodelet/plugin-api/v1';
import type { KubeClients } from '../../kube/index.ts';
import type { PluginHandler } from '../../pluginmanager/index.ts';
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
  readonly options: { readonly podsDir: string; readonly pluginsDir: string; readonly volumeStatsAggPeriodMs: number };
  readonly nodeName: string;
  readonly log: Logger;
}

/** The running CSI parts. */
export interface Csi {
  readonly drivers: CsiDriverRegistry;
  /** The `kubernetes.io/csi` volume plugin, for the node's volume plugin list. */
  readonly volumePlugin: CsiVolumePlugin;
  /** The `CSIPlugin` registration handler. */
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
    drivers,
    refs,
    pluginsDir: o.options.pluginsDir,
    nodeName: o.nodeName,
    log,
    api: o.clients ? csiVolumeApi(o.clients) : undefined,
    statsPeriodMs: o.options.volumeStatsAggPeriodMs,
  });
  const handler = csiPluginHandler({
    drivers,
    log,
    nodeInfo: o.clients ? new NodeInfoManager(nodeInfoApi(o.clients), o.nodeName) : undefined,
    onRegistered: (driver) => void volumePlugin.unstageOrphans(driver),
  });
  return { drivers, volumePlugin, handler, stop: () => drivers.close() };
}

export { CsiDriverRegistry, CsiVolumePlugin, csiPluginHandler, NodeInfoManager, StageRefs };
export type { CsiVolumeUsage, PublishedVolume } from './volume-stats.ts';

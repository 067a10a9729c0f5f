/**
 * The `CSIPlugin` handler of the plugin manager (upstream
 * `pkg/volume/csi/csi_plugin.go` RegistrationHandler):
 *
 *   validatePlugin  versions by upstream's rules (validateCsiPlugin)
 *   registerPlugin  versions again → driver registry ← {endpoint, version}
 *                   → NodeGetInfo (2 min) → node info manager install
 *                   any failure: driver unregistered again, error rethrown
 *                   (the plugin manager tells the plugin with registered=false)
 *   deRegisterPlugin  driver registry delete (same endpoint only)
 *                   → node info manager uninstall
 */
import { errorDetail, nodeletError } from '../../errors/index.ts';
import { type PluginHandler, validateCsiPlugin, validateCsiVersions } from '../../pluginmanager/index.ts';
import type { Logger } from '@nodelet/plugin-api/v1';
import type { CsiDriverRegistry } from './csi-driver-registry.ts';
import { nodeGetInfo } from './csi-node-calls.ts';
import { CSI_TIMEOUT_MS, csiLog } from './csi-paths.ts';
import type { NodeInfoManager } from './node-info-manager.ts';

/** What the handler needs. */
export interface CsiPluginHandlerOptions {
  readonly drivers: CsiDriverRegistry;
  /** Absent in standalone mode (no API server): drivers register but nothing is recorded in the cluster. */
  readonly nodeInfo?: NodeInfoManager;
  readonly log: Logger;
  /** Called after a driver registered (e.g. to unstage orphaned volumes of that driver). */
  readonly onRegistered?: (driver: string) => void;
  /** NodeGetInfo deadline; default upstream's 2 minutes. */
  readonly timeoutMs?: number;
}

/** Creates the `CSIPlugin` handler. */
export function csiPluginHandler(o: CsiPluginHandlerOptions): PluginHandler {
  const unregister = async (name: string, endpoint?: string): Promise<void> => {
    if (!o.drivers.delete(name, endpoint)) return;
    try {
      await o.nodeInfo?.uninstallDriver(name);
    } catch (e) {
      throw nodeletError('NDL_CSI_NODE_INFO', csiLog(`Error uninstalling CSI driver: ${errorDetail(e)}`), e);
    }
  };
  return {
    validatePlugin(name, endpoint, versions) {
      o.log.info(csiLog(`Trying to validate a new CSI Driver with name: ${name} endpoint: ${endpoint} versions: ${versions.join(',')}`));
      validateCsiPlugin(name, endpoint, versions, o.drivers.get(name)?.highestSupportedVersion);
    },

    async registerPlugin(name, endpoint, versions, pluginClientTimeoutMs) {
      o.log.info(csiLog(`Register new plugin with name: ${name} at endpoint: ${endpoint}`));
      const highest = validateCsiVersions('RegisterPlugin', name, versions, o.drivers.get(name)?.highestSupportedVersion);
      await o.drivers.set({ name, endpoint, highestSupportedVersion: highest });
      try {
        const started = Date.now();
        const info = await nodeGetInfo(o.drivers.nodeClient(name), pluginClientTimeoutMs ?? o.timeoutMs ?? CSI_TIMEOUT_MS);
        await o.nodeInfo?.installDriver(name, info.nodeID, info.maxVolumesPerNode, info.topology);
        o.log.info({ driver: name, nodeID: info.nodeID, topology: info.topology, ms: Date.now() - started }, 'CSI driver node info recorded');
      } catch (e) {
        await unregister(name, endpoint).catch((ue) =>
          o.log.error({ err: ue }, csiLog(`registrationHandler.RegisterPlugin failed to unregister plugin due to previous error: ${errorDetail(ue)}`)),
        );
        throw e;
      }
      o.onRegistered?.(name);
    },

    async deRegisterPlugin(name, endpoint) {
      o.log.info(csiLog(`registrationHandler.DeRegisterPlugin request for plugin ${name}, endpoint ${endpoint}`));
      try {
        await unregister(name, endpoint);
      } catch (e) {
        o.log.error({ err: e }, csiLog(`registrationHandler.DeRegisterPlugin failed: ${errorDetail(e)}`));
        throw e;
      }
    },
  };
}

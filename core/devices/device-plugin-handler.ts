/**
 * The `DevicePlugin` handler for the plugin manager (registration through
 * `<root>/plugins_registry`; upstream devicemanager `plugin/v1beta1/handler.go`).
 * Validation mirrors the kubelet.sock path; register/deregister go to the same
 * device manager, so both paths share one endpoint per resource.
 *
 * Creating the handler writes `<device-plugins dir>/DEPRECATION`, as upstream
 * does when it hands its handler to the plugin manager: plugins built on
 * upstream's stub (sample-device-plugin) then skip the kubelet.sock
 * registration and rely on plugins_registry alone. kubelet.sock keeps
 * working for plugins that register there regardless of the marker.
 */
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '@nodelet/plugin-api/v1';
import { DEVICE_PLUGIN_VERSION } from '../../sockets/deviceplugin.ts';
import { nodeletError } from '../errors/index.ts';
import type { PluginHandler } from '../pluginmanager/index.ts';
import type { DeviceManager } from './device-manager.ts';
import { isSupportedVersion } from './registration-server.ts';
import { isExtendedResourceName } from './resource-name.ts';

/** The marker file's name. */
export const DEPRECATION_FILE = 'DEPRECATION';

/** Creates (or truncates) the DEPRECATION marker; failures are logged, as upstream. */
function writeDeprecationMarker(dir: string, log: Logger): void {
  try {
    closeSync(openSync(join(dir, DEPRECATION_FILE), 'w', 0o644));
  } catch (e) {
    log.error({ path: dir, err: String(e) }, 'Failed to create deprecation file at socket dir');
  }
}

/** Builds the handler; `dir` is the device-plugins directory (for the marker). */
export function createDevicePluginHandler(manager: DeviceManager, dir: string, log: Logger): PluginHandler {
  writeDeprecationMarker(dir, log);
  return {
    validatePlugin(name, endpoint, versions) {
      if (!isSupportedVersion(...versions)) {
        throw nodeletError('NDL_PLUGIN_VERSION', `manager version, ${DEVICE_PLUGIN_VERSION}, is not among plugin supported versions [${versions.join(' ')}]`);
      }
      if (!isExtendedResourceName(name)) {
        throw nodeletError('NDL_PLUGIN_VALIDATION', `invalid name of device plugin socket: the ResourceName ${JSON.stringify(name)} is invalid`);
      }
      log.info({ plugin: name, endpoint, versions }, 'Device plugin validated');
    },
    async registerPlugin(name, endpoint) {
      log.info({ plugin: name, endpoint }, 'Registering plugin at endpoint');
      await manager.registerEndpoint(name, endpoint);
    },
    deRegisterPlugin(name, endpoint) {
      log.info({ plugin: name, endpoint }, 'Deregistering plugin');
      manager.deregisterEndpoint(name, endpoint);
    },
  };
}

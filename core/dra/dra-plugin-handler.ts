/**
 * The `DRAPlugin` handler for the plugin manager (upstream
 * `pkg/kubelet/cm/dra/plugin` `RegistrationHandler`): validation picks the
 * service version (`v1.DRAPlugin` preferred, `v1beta1.DRAPlugin` as the
 * fallback), registration connects to the driver's socket (with the health
 * stream when it lists `v1alpha1.DRAResourceHealth`) and adds it to the
 * driver registry, deregistration removes it (its ResourceSlices go after the
 * registry's grace period unless it comes back).
 */
import type { Logger } from '@nodelet/plugin-api/v1';
import { nodeletError } from '../errors/index.ts';
import type { PluginHandler } from '../pluginmanager/index.ts';
import { chooseDraVersion, DRA_SERVICE_VERSIONS, type DraClientFactory } from './driver-client.ts';
import type { DraDriverRegistry } from './driver-registry.ts';
import { DRA_RESOURCE_HEALTH_SERVICE } from '../../sockets/dra-names.ts';

/**
 * Builds the handler; `loadConnect` gives the factory of a registered driver's client, either
 * at once or once loaded (the gRPC client, whose protocol code loads with the first driver).
 */
export function createDraPluginHandler(
  registry: DraDriverRegistry,
  loadConnect: () => DraClientFactory | Promise<DraClientFactory>,
  log: Logger,
): PluginHandler {
  const version = (name: string, versions: readonly string[]) => {
    const v = chooseDraVersion(versions);
    if (!v) {
      throw nodeletError(
        'NDL_PLUGIN_VERSION',
        `DRA plugin ${JSON.stringify(name)}: none of the supported versions [${versions.join(' ')}] is one of [${DRA_SERVICE_VERSIONS.join(' ')}]`,
      );
    }
    return v;
  };
  return {
    validatePlugin(name, endpoint, versions) {
      if (!name) throw nodeletError('NDL_PLUGIN_VALIDATION', 'DRA plugin name is empty');
      const v = version(name, versions);
      log.info({ plugin: name, endpoint, versions, chosen: v }, 'DRA plugin validated');
    },
    registerPlugin(name, endpoint, versions, pluginClientTimeoutMs) {
      const v = version(name, versions);
      const health = versions.includes(DRA_RESOURCE_HEALTH_SERVICE);
      const register = (connect: DraClientFactory): void => {
        registry.register(name, endpoint, connect(endpoint, v, pluginClientTimeoutMs ?? 0, health));
        log.info({ plugin: name, endpoint, version: v, health }, 'Registered DRA plugin');
      };
      const connect = loadConnect();
      return typeof connect === 'function' ? register(connect) : connect.then(register);
    },
    deRegisterPlugin(name, endpoint) {
      registry.deregister(name, endpoint);
      log.info({ plugin: name, endpoint }, 'Deregistered DRA plugin');
    },
  };
}

/**
 * Device plugins on this node, ready to wire: the device manager (checkpoint
 * loaded), the kubelet.sock Registration server, the plugins_registry
 * handler, and the podresources API. The composition root plugs them into
 * the node's extension points:
 *
 *   admit handlers        deviceAdmitHandler(manager)     (before the predicates)
 *   admission allocatable deviceAllocatable(manager)
 *   container options     deviceContainerOptions(manager) (env + mounts)
 *   node status           extraResources() + onChange(poke) → NodeController
 *   pod status            statusContributor (allocatedResourcesStatus: device health)
 *                         + onHealthChange(uids) → PodController.resyncPods
 *   plugin registration   handler                         → { [DEVICE_PLUGIN]: handler }
 */
import { join } from 'node:path';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import type { PluginHandler } from '../pluginmanager/index.ts';
import type { PodStatusContributor } from '../pods/index.ts';
import { deviceStatusContributor } from './allocated-resources-status.ts';
import { DeviceManager } from './device-manager.ts';
import { DEVICE_PLUGIN } from '../../sockets/pluginregistration.ts';
import { createDevicePluginHandler } from './device-plugin-handler.ts';
import { startPodResourcesServer, type DynamicResourceInfo, type PodResourcesServer } from './pod-resources-server.ts';
import { RegistrationServer } from './registration-server.ts';

export { DeviceManager } from './device-manager.ts';
export { DEVICE_WARNING_REASON } from './container-devices.ts';
export { deviceAdmitHandler, deviceAllocatable } from './device-admit-handler.ts';
export { deviceContainerOptions } from './device-container-options.ts';
export type { DynamicResourceInfo } from './pod-resources-server.ts';

/** The socket file of the podresources API. */
export const POD_RESOURCES_SOCKET_NAME = 'kubelet.sock';

/** Options of {@link startDevicePlugins} (fields of NodeletOptions). */
export interface DevicePluginsOptions {
  readonly devicePluginsDir: string;
  readonly podResourcesDir: string;
  readonly deviceEndpointGracePeriodMs: number;
}

/** Pod facts the device manager needs from the pod controller. */
export interface DevicePluginsDeps {
  /** Pods bound here that are not terminal, admitted or not (e.g. `pods.pods()` minus Succeeded/Failed). */
  activePods(): readonly V1Pod[];
  /** False until the pod sources delivered their initial list (default: always true). */
  sourcesReady?(): boolean;
  /** The DRA claims prepared for a container, for podresources (default: none). */
  dynamicResources?(pod: V1Pod, container: V1Container): readonly DynamicResourceInfo[];
}

/** Running device-plugin support. */
export interface DevicePlugins {
  readonly manager: DeviceManager;
  /** The `DevicePlugin` handler for the plugin manager (creating it wrote the DEPRECATION marker). */
  readonly handler: PluginHandler;
  /** Node status capacity/allocatable of device-plugin resources. */
  extraResources(): { capacity: Record<string, string>; allocatable: Record<string, string> };
  /** Calls `fn` when capacity/allocatable may have changed (e.g. `node.poke()`). */
  onChange(fn: () => void): () => void;
  /** `allocatedResourcesStatus` of the containers holding devices (their health as the plugins report it). */
  readonly statusContributor: PodStatusContributor;
  /** Calls `fn` with the pods whose devices' health changed (the pod controller syncs them again). */
  onHealthChange(fn: (podUIDs: string[]) => void): () => void;
  stop(): Promise<void>;
}

/** Loads the checkpoint and starts the Registration and podresources servers. */
export async function startDevicePlugins(o: DevicePluginsOptions, deps: DevicePluginsDeps, log: Logger): Promise<DevicePlugins> {
  const dlog = log.child({ component: 'devicemanager' });
  const manager = new DeviceManager({
    dir: o.devicePluginsDir,
    log: dlog,
    graceMs: o.deviceEndpointGracePeriodMs,
    activePods: () => deps.activePods(),
    sourcesReady: deps.sourcesReady ? () => deps.sourcesReady!() : undefined,
  });
  await manager.start();
  const registration = new RegistrationServer(o.devicePluginsDir, manager, dlog);
  await registration.start();
  const handler = createDevicePluginHandler(manager, o.devicePluginsDir, dlog);
  let podResources: PodResourcesServer;
  try {
    podResources = await startPodResourcesServer(
      join(o.podResourcesDir, POD_RESOURCES_SOCKET_NAME),
      { activePods: () => deps.activePods(), devices: manager, dynamicResources: deps.dynamicResources ? (p, c) => deps.dynamicResources!(p, c) : undefined },
      log.child({ component: 'podresources' }),
    );
  } catch (e) {
    await registration.stop();
    manager.stop();
    throw e;
  }
  dlog.info({ type: DEVICE_PLUGIN }, 'device plugin support started');
  return {
    manager,
    handler,
    extraResources: () => manager.capacity(),
    onChange: (fn) => manager.onChange(fn),
    statusContributor: deviceStatusContributor(manager),
    onHealthChange: (fn) => manager.onHealthChange(fn),
    async stop() {
      await registration.stop();
      await podResources.stop();
      manager.stop();
    },
  };
}

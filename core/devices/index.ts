/**
 * Device plugins on this node, ready to wire: the device manager (checkpoint
 * loaded), the kubelet.sock Registration server, the plugins_registry
 * handler, and the podresources API. The small functions here are the
 * integration points for the agent:
 *
 *   admission     admit(pod)                       → AdmitResult (after the predicates)
 *   predicates    admissionAllocatable()           → merge into AdmitContext.allocatable
 *   node status   extraResources() + onChange(poke) → NodeController
 *   containers    containerEnv(pod, c)             → resolveEnv `extra`
 *                 containerMounts(pod, c, podDir, taken) → append to PodSetup.mounts
 *   plugins       handler                          → pluginManager.addHandler('DevicePlugin', handler)
 */
import { join } from 'node:path';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import type { AdmitResult } from '../pods/admission.ts';
import type { PluginHandler } from '../pluginmanager/plugin-handler.ts';
import { applyDeviceConfig, deviceStagingDir, type AppliedDeviceConfig } from './container-devices.ts';
import { DeviceManager } from './device-manager.ts';
import { createDevicePluginHandler, DEVICE_PLUGIN_TYPE } from './device-plugin-handler.ts';
import { startPodResourcesServer, type PodResourcesServer } from './pod-resources-server.ts';
import { RegistrationServer } from './registration-server.ts';

export { DeviceManager, DEFAULT_ENDPOINT_GRACE_MS } from './device-manager.ts';
export { DEVICE_PLUGIN_TYPE } from './device-plugin-handler.ts';
export { DEVICE_WARNING_REASON } from './container-devices.ts';

/** The socket file of the podresources API. */
export const POD_RESOURCES_SOCKET_NAME = 'kubelet.sock';

/** Options of {@link startDevicePlugins} (fields of NodeletOptions). */
export interface DevicePluginsOptions {
  readonly devicePluginsDir: string;
  readonly podResourcesDir: string;
  readonly deviceEndpointGracePeriodMs?: number;
}

/** Pod facts the device manager needs from the pod controller. */
export interface DevicePluginsDeps {
  /** Pods bound here that are not terminal, admitted or not (e.g. `pods.pods()` minus Succeeded/Failed). */
  activePods(): readonly V1Pod[];
  /** False until the pod sources delivered their initial list (default: always true). */
  sourcesReady?(): boolean;
}

/** Running device-plugin support. */
export interface DevicePlugins {
  readonly manager: DeviceManager;
  /** The `DevicePlugin` handler for the plugin manager (creating it wrote the DEPRECATION marker). */
  readonly handler: PluginHandler;
  /** Admission step: allocates devices; rejects with UnexpectedAdmissionError when that fails. */
  admit(pod: V1Pod): Promise<AdmitResult>;
  /** Node status capacity/allocatable of device-plugin resources. */
  extraResources(): { capacity: Record<string, string>; allocatable: Record<string, string> };
  /** Allocatable for the admission predicates (never below what is allocated). */
  admissionAllocatable(): Record<string, string>;
  /** Device-plugin env vars of a container (lowest precedence). */
  containerEnv(pod: V1Pod, container: V1Container): Record<string, string>;
  /** Device-plugin mounts of a container, and what cannot be applied (for a Warning event). */
  containerMounts(pod: V1Pod, container: V1Container, podDir: string, taken: readonly string[]): AppliedDeviceConfig;
  /** Calls `fn` when capacity/allocatable may have changed (e.g. `node.poke()`). */
  onChange(fn: () => void): () => void;
  stop(): Promise<void>;
}

/** Loads the checkpoint and starts the Registration and podresources servers. */
export async function startDevicePlugins(o: DevicePluginsOptions, deps: DevicePluginsDeps, log: Logger): Promise<DevicePlugins> {
  const dlog = log.child({ component: 'devicemanager' });
  const manager = new DeviceManager({
    dir: o.devicePluginsDir, log: dlog, graceMs: o.deviceEndpointGracePeriodMs,
    activePods: () => deps.activePods(), sourcesReady: deps.sourcesReady ? () => deps.sourcesReady!() : undefined,
  });
  manager.start();
  const registration = new RegistrationServer(o.devicePluginsDir, manager, dlog);
  await registration.start();
  const handler = createDevicePluginHandler(manager, o.devicePluginsDir, dlog);
  let podResources: PodResourcesServer;
  try {
    podResources = await startPodResourcesServer(join(o.podResourcesDir, POD_RESOURCES_SOCKET_NAME), { activePods: () => deps.activePods(), devices: manager }, log.child({ component: 'podresources' }));
  } catch (e) {
    await registration.stop();
    manager.stop();
    throw e;
  }
  dlog.info({ type: DEVICE_PLUGIN_TYPE }, 'device plugin support started');
  return {
    manager,
    handler,
    admit: (pod) => manager.allocate(pod),
    extraResources: () => manager.capacity(),
    admissionAllocatable: () => manager.admissionAllocatable(),
    containerEnv: (pod, c) => manager.containerConfig(pod.metadata?.uid ?? '', c.name).envs,
    containerMounts(pod, c, podDir, taken) {
      const cfg = manager.containerConfig(pod.metadata?.uid ?? '', c.name);
      const empty = cfg.mounts.length + cfg.devices.length + cfg.cdiDevices.length + Object.keys(cfg.annotations).length === 0;
      if (empty) return { env: cfg.envs, mounts: [], warnings: cfg.conflicts };
      return applyDeviceConfig(cfg, deviceStagingDir(podDir, c.name), taken);
    },
    onChange: (fn) => manager.onChange(fn),
    async stop() {
      await registration.stop();
      await podResources.stop();
      manager.stop();
    },
  };
}

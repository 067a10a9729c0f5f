/**
 * Device plugins at container start, as a container-options contributor
 * (upstream `GetDeviceRunContainerOptions`): env vars from the Allocate
 * responses (lowest precedence), and device mounts appended to the volume
 * mounts (staged for providers that mount directories only). What cannot be
 * applied becomes a `Warning` event ({@link DEVICE_WARNING_REASON}).
 *
 * A container that asks for devices but holds none (its pod was not
 * allocated at admission) is allocated here first, as upstream re-allocates;
 * a failure fails the container start with upstream's admission message
 * (`NDL_CONTAINER_CONFIG`, i.e. `CreateContainerConfigError`).
 */
import { nodeletError } from '../errors/index.ts';
import type { ContainerOptionsContributor } from '../pods/index.ts';
import { applyDeviceConfig, DEVICE_WARNING_REASON, deviceStagingDir } from './container-devices.ts';
import type { DeviceManager } from './device-manager.ts';

/** The contributor of device env and mounts. */
export function deviceContainerOptions(manager: Pick<DeviceManager, 'needsAllocation' | 'allocate' | 'containerConfig'>): ContainerOptionsContributor {
  const warnings = (messages: readonly string[]) => messages.map((message) => ({ reason: DEVICE_WARNING_REASON, message }));
  return {
    name: 'devices',
    async env(pod, container) {
      if (manager.needsAllocation(pod)) {
        const r = await manager.allocate(pod);
        if (!r.admit) throw nodeletError('NDL_CONTAINER_CONFIG', r.message);
      }
      return manager.containerConfig(pod.metadata?.uid ?? '', container.name).envs;
    },
    mounts(pod, container, { podDir, taken }) {
      const cfg = manager.containerConfig(pod.metadata?.uid ?? '', container.name);
      const empty = cfg.mounts.length + cfg.devices.length + cfg.cdiDevices.length + Object.keys(cfg.annotations).length === 0;
      if (empty) return { warnings: warnings(cfg.conflicts) };
      const applied = applyDeviceConfig(cfg, deviceStagingDir(podDir, container.name), taken);
      return { mounts: applied.mounts, warnings: warnings(applied.warnings) };
    },
  };
}

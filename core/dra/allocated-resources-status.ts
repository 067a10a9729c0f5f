/**
 * `status.containerStatuses[].allocatedResourcesStatus` for DRA (upstream
 * `Manager.UpdateAllocatedResourcesStatus`, ResourceHealthStatus, beta and on
 * by default since 1.36): for each container that references a prepared
 * claim, one entry per reference named `claim:<pod claim name>` (or
 * `claim:<pod claim name>/<request>`), listing the claim's devices serving
 * that request with their health from the driver's health stream
 * (`Unknown` when the driver reports none). `resourceID` is the device's
 * first CDI device id, or `<driver>/<pool>/<device>` when it has none;
 * `message` is set when the driver gave one. Entries of other sources
 * (names not starting with `claim:`) are kept.
 */
import type { V1ContainerStatus, V1Pod, V1PodStatus, V1ResourceHealth, V1ResourceStatus } from '@kubernetes/client-node';
import type { PodStatusContributor } from '../pods/index.ts';
import { servesRequest, type DraManager } from './dra-manager.ts';
import type { DeviceHealthCache } from './health-info.ts';

/** The entries of one container. */
function claimStatuses(manager: DraManager, health: DeviceHealthCache, pod: V1Pod, cs: V1ContainerStatus): V1ResourceStatus[] {
  const container = pod.spec?.containers.find((c) => c.name === cs.name);
  if (!container?.resources?.claims?.length) return [];
  const out: V1ResourceStatus[] = [];
  for (const { ref, state } of manager.containerClaims(pod, container)) {
    const resources: V1ResourceHealth[] = [];
    const seen = new Set<string>();
    for (const driver of Object.keys(state.DriverState).sort()) {
      for (const d of state.DriverState[driver]!.Devices) {
        if (ref.request && d.RequestNames.length > 0 && !servesRequest(d.RequestNames, ref.request)) continue;
        const resourceID = d.CDIDeviceIDs[0] ?? `${driver}/${d.PoolName}/${d.DeviceName}`;
        if (seen.has(resourceID)) continue;
        seen.add(resourceID);
        const h = health.get(driver, d.PoolName, d.DeviceName);
        resources.push({ resourceID, health: h.health, ...(h.message ? { message: h.message } : {}) });
      }
    }
    if (resources.length > 0) out.push({ name: ref.request ? `claim:${ref.name}/${ref.request}` : `claim:${ref.name}`, resources });
  }
  return out;
}

/** The pod-status contributor of DRA. */
export function draStatusContributor(manager: DraManager, health: DeviceHealthCache): PodStatusContributor {
  return {
    name: 'dra',
    contribute(pod: V1Pod, status: V1PodStatus): V1PodStatus {
      if (!pod.spec?.resourceClaims?.length || !status.containerStatuses?.length) return status;
      return {
        ...status,
        containerStatuses: status.containerStatuses.map((cs) => {
          const others = (cs.allocatedResourcesStatus ?? []).filter((r) => !r.name.startsWith('claim:'));
          const all = [...others, ...claimStatuses(manager, health, pod, cs)];
          const { allocatedResourcesStatus: _, ...rest } = cs;
          return all.length > 0 ? { ...rest, allocatedResourcesStatus: all } : rest;
        }),
      };
    },
  };
}

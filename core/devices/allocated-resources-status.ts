/**
 * `status.containerStatuses[].allocatedResourcesStatus` for device plugins
 * (ResourceHealthStatus, beta and on by default; upstream devicemanager
 * `UpdateAllocatedResourcesStatus`, called while the kubelet builds a pod's
 * status, before DRA's): for each regular container holding devices, one entry
 * per device-plugin resource, `{name: <resource>, resources: [{resourceID:
 * <device ID>, health: Healthy|Unhealthy}]}`. An entry of the same name
 * already in the status is replaced; other entries (DRA's `claim:…`) are kept.
 * Init containers (sidecars included) get none, as upstream.
 *
 * When a plugin reports a device's health changed, the device manager names
 * the pods holding it (`onHealthChange`) and the composition root has the pod
 * controller sync them again, which runs this contributor.
 */
import type { V1ContainerStatus, V1Pod, V1PodStatus, V1ResourceStatus } from '@kubernetes/client-node';
import type { PodStatusContributor } from '../pods/index.ts';
import type { DeviceManager } from './device-manager.ts';

/** `existing` with `mine` merged in by name (replaced in place, else appended). */
function merge(existing: readonly V1ResourceStatus[], mine: readonly V1ResourceStatus[]): V1ResourceStatus[] {
  const out = existing.map((e) => mine.find((m) => m.name === e.name) ?? e);
  for (const m of mine) if (!existing.some((e) => e.name === m.name)) out.push(m);
  return out;
}

/** The pod-status contributor of device plugins. */
export function deviceStatusContributor(manager: DeviceManager): PodStatusContributor {
  return {
    name: 'devices',
    contribute(pod: V1Pod, status: V1PodStatus): V1PodStatus {
      const uid = pod.metadata?.uid;
      if (!uid || !status.containerStatuses?.length || !manager.holdsDevices(uid)) return status;
      let changed = false;
      const containerStatuses = status.containerStatuses.map((cs): V1ContainerStatus => {
        const mine = manager.allocatedResourcesStatus(uid, cs.name);
        if (mine.length === 0) return cs;
        changed = true;
        return { ...cs, allocatedResourcesStatus: merge(cs.allocatedResourcesStatus ?? [], mine) };
      });
      return changed ? { ...status, containerStatuses } : status;
    },
  };
}

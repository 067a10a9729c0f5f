/**
 * Which devices each container holds, with the plugin's allocate response
 * (upstream devicemanager `pod_devices.go`): podUID → container → resource.
 */
import type { ContainerAllocateResponse__Output } from '../../sockets/deviceplugin.ts';
import { decodeContainerAllocateResponse, encodeContainerAllocateResponse } from './alloc-response.ts';
import type { CheckpointEntry } from './checkpoint.ts';

/** NUMA node used for devices without topology (upstream `nodeWithoutTopology`). */
export const NO_TOPOLOGY = -1;

/** Device IDs per NUMA node. */
export type DevicesPerNuma = Map<number, string[]>;

/** One container's devices of one resource. */
export interface ResourceAllocation {
  readonly deviceIds: DevicesPerNuma;
  readonly allocResp: ContainerAllocateResponse__Output;
}

/** A mount from a device plugin's allocate response. */
export interface DeviceMount {
  containerPath: string;
  hostPath: string;
  readOnly: boolean;
}
/** A device node from a device plugin's allocate response. */
export interface DeviceNode {
  containerPath: string;
  hostPath: string;
  permissions: string;
}

/** What the runtime must apply to a container (upstream `DeviceRunContainerOptions`). */
export interface ContainerDeviceConfig {
  envs: Record<string, string>;
  mounts: DeviceMount[];
  devices: DeviceNode[];
  annotations: Record<string, string>;
  cdiDevices: string[];
  /** Conflicting settings between resources (the first one wins, as upstream). */
  conflicts: string[];
}

/** The set of device IDs of a per-NUMA map. */
export function idsOf(perNuma: DevicesPerNuma): Set<string> {
  return new Set([...perNuma.values()].flat());
}

type Containers = Map<string, Map<string, ResourceAllocation>>;

/** The allocation table. */
export class PodDevices {
  private readonly _pods = new Map<string, Containers>();

  insert(podUID: string, container: string, resource: string, deviceIds: DevicesPerNuma, allocResp: ContainerAllocateResponse__Output): void {
    let containers = this._pods.get(podUID);
    if (!containers) this._pods.set(podUID, (containers = new Map()));
    let resources = containers.get(container);
    if (!resources) containers.set(container, (resources = new Map()));
    resources.set(resource, { deviceIds, allocResp });
  }

  /** Forgets pods (their devices return to the pool). */
  delete(podUIDs: Iterable<string>): void {
    for (const uid of podUIDs) this._pods.delete(uid);
  }

  pods(): Set<string> {
    return new Set(this._pods.keys());
  }

  hasPod(podUID: string): boolean {
    return this._pods.has(podUID);
  }

  /** The devices of `resource` a container holds, or undefined when it has none recorded. */
  containerDevices(podUID: string, container: string, resource: string): Set<string> | undefined {
    const a = this._pods.get(podUID)?.get(container)?.get(resource);
    return a ? idsOf(a.deviceIds) : undefined;
  }

  /** Every resource of a container. */
  containerAllocations(podUID: string, container: string): ReadonlyMap<string, ResourceAllocation> {
    return this._pods.get(podUID)?.get(container) ?? new Map();
  }

  /** UIDs of the pods holding any of `ids` of `resource`. */
  podsHolding(resource: string, ids: ReadonlySet<string>): string[] {
    const out: string[] = [];
    for (const [uid, containers] of this._pods) {
      const holds = [...containers.values()].some((resources) => {
        const a = resources.get(resource);
        return a !== undefined && [...idsOf(a.deviceIds)].some((id) => ids.has(id));
      });
      if (holds) out.push(uid);
    }
    return out;
  }

  /** Devices in use per resource. */
  devices(): Map<string, Set<string>> {
    const out = new Map<string, Set<string>>();
    for (const containers of this._pods.values()) {
      for (const resources of containers.values()) {
        for (const [resource, a] of resources) {
          let set = out.get(resource);
          if (!set) out.set(resource, (set = new Set()));
          for (const id of idsOf(a.deviceIds)) set.add(id);
        }
      }
    }
    return out;
  }

  /** Upstream `addContainerAllocatedResources`: a container's devices become reusable by later containers. */
  addContainerAllocated(podUID: string, container: string, into: Map<string, Set<string>>): void {
    for (const [resource, a] of this.containerAllocations(podUID, container)) {
      let set = into.get(resource);
      if (!set) into.set(resource, (set = new Set()));
      for (const id of idsOf(a.deviceIds)) set.add(id);
    }
  }

  /** Upstream `removeContainerAllocatedResources`: a container's devices are no longer reusable. */
  removeContainerAllocated(podUID: string, container: string, from: Map<string, Set<string>>): void {
    for (const [resource, a] of this.containerAllocations(podUID, container)) {
      for (const id of idsOf(a.deviceIds)) from.get(resource)?.delete(id);
    }
  }

  /** Checkpoint entries (sorted, so the file is stable). */
  toCheckpoint(): CheckpointEntry[] {
    const out: CheckpointEntry[] = [];
    for (const [podUID, containers] of this._pods) {
      for (const [container, resources] of containers) {
        for (const [resource, a] of resources) {
          const ids: Record<string, string[]> = {};
          for (const [numa, list] of [...a.deviceIds].sort((x, y) => x[0] - y[0])) ids[String(numa)] = [...list].sort();
          out.push({
            PodUID: podUID,
            ContainerName: container,
            ResourceName: resource,
            DeviceIDs: ids,
            AllocResp: encodeContainerAllocateResponse(a.allocResp).toString('base64'),
          });
        }
      }
    }
    return out;
  }

  /** Loads checkpoint entries; entries whose AllocResp cannot be parsed are skipped and reported (as upstream). */
  fromCheckpoint(entries: readonly CheckpointEntry[], onBad: (entry: CheckpointEntry, err: Error) => void): void {
    for (const e of entries) {
      try {
        const resp = decodeContainerAllocateResponse(Buffer.from(e.AllocResp ?? '', 'base64'));
        const perNuma: DevicesPerNuma = new Map();
        for (const [k, v] of Object.entries(e.DeviceIDs ?? {})) perNuma.set(Number(k), [...(v ?? [])]);
        this.insert(e.PodUID, e.ContainerName, e.ResourceName, perNuma, resp);
      } catch (err) {
        onBad(e, err as Error);
      }
    }
  }

  /** Upstream `deviceRunContainerOptions`: merged settings of all resources of a container. */
  containerConfig(podUID: string, container: string): ContainerDeviceConfig {
    const cfg: ContainerDeviceConfig = { envs: {}, mounts: [], devices: [], annotations: {}, cdiDevices: [], conflicts: [] };
    const mounts = new Map<string, string>();
    const devs = new Map<string, string>();
    const cdi = new Set<string>();
    for (const [resource, { allocResp: r }] of this.containerAllocations(podUID, container)) {
      mergeMap(cfg.envs, r.envs, `env`, resource, cfg.conflicts);
      mergeMap(cfg.annotations, r.annotations, `annotation`, resource, cfg.conflicts);
      for (const d of r.devices) {
        const seen = devs.get(d.container_path);
        if (seen !== undefined) {
          if (seen !== d.host_path) cfg.conflicts.push(`device ${d.container_path}: ${resource} maps ${d.host_path}, already ${seen}`);
          continue;
        }
        devs.set(d.container_path, d.host_path);
        cfg.devices.push({ containerPath: d.container_path, hostPath: d.host_path, permissions: d.permissions });
      }
      for (const m of r.mounts) {
        const seen = mounts.get(m.container_path);
        if (seen !== undefined) {
          if (seen !== m.host_path) cfg.conflicts.push(`mount ${m.container_path}: ${resource} maps ${m.host_path}, already ${seen}`);
          continue;
        }
        mounts.set(m.container_path, m.host_path);
        cfg.mounts.push({ containerPath: m.container_path, hostPath: m.host_path, readOnly: m.read_only });
      }
      for (const c of r.cdi_devices)
        if (!cdi.has(c.name)) {
          cdi.add(c.name);
          cfg.cdiDevices.push(c.name);
        }
    }
    return cfg;
  }
}

function mergeMap(into: Record<string, string>, from: Record<string, string>, what: string, resource: string, conflicts: string[]): void {
  for (const [k, v] of Object.entries(from)) {
    if (Object.hasOwn(into, k)) {
      if (into[k] !== v) conflicts.push(`${what} ${k}: ${resource} sets ${JSON.stringify(v)}, already ${JSON.stringify(into[k])}`);
      continue;
    }
    into[k] = v;
  }
}

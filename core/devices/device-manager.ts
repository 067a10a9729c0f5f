/**
 * The device manager (upstream `pkg/kubelet/cm/devicemanager/manager.go`):
 * endpoints per resource, device health, node capacity, allocation at
 * admission, and the checkpoint.
 *
 * Per resource:
 *
 *     (checkpoint) ─► KNOWN, stopped endpoint, no devices (capacity 0)
 *     register ─► RUNNING: ListAndWatch sets devices; capacity = all, allocatable = healthy
 *     stream ends / plugin deregistered ─► STOPPED: all devices unhealthy (allocatable 0,
 *                                           capacity kept) for the grace period
 *     grace expired (seen by capacity()) ─► REMOVED: reported as capacity 0 / allocatable 0
 *     a new registration of the same resource replaces the endpoint in any state.
 *
 * Device health (ResourceHealthStatus): each ListAndWatch update that changes
 * a device's health, or brings a device back, names the pods holding it to the
 * health listeners (upstream `genericDeviceUpdateCallback` → the kubelet's
 * pod sync), and {@link DeviceManager.allocatedResourcesStatus} gives a
 * container's devices with their last reported health for its status.
 *
 * Allocations survive restarts through the checkpoint; a container whose
 * devices are recorded there keeps them (and the recorded allocate response)
 * without calling the plugin again (upstream `devicesToAllocate`: nothing
 * more is needed), whether it is still running after a nodelet restart (the
 * WASI runtime process keeps containers across restarts) or is started again.
 * Devices return to the pool when their pod is no longer active.
 */
import type { V1Container, V1Pod, V1ResourceStatus } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import type { Device__Output } from '../../sockets/deviceplugin.ts';
import { HEALTHY, loadDevicePlugin, UNHEALTHY } from '../../sockets/deviceplugin.ts';
import type { AdmitResult } from '../pods/index.ts';
import { quantityUnits } from '../kube/index.ts';
import { errorDetail, nodeletError } from '../errors/index.ts';
import { readCheckpoint, writeCheckpoint } from './checkpoint.ts';
import { DeviceEndpoint, type EndpointListener } from './endpoint.ts';
import { idsOf, NO_TOPOLOGY, PodDevices, type ContainerDeviceConfig, type DevicesPerNuma } from './pod-devices.ts';
import { isExtendedResourceName } from './resource-name.ts';

/** Options of {@link DeviceManager}. */
export interface DeviceManagerOptions {
  /** `<root>/device-plugins`: holds the checkpoint. */
  readonly dir: string;
  readonly log: Logger;
  /** How long a stopped plugin keeps its capacity (`--device-endpoint-grace-period`, upstream's `endpointStopGracePeriod`). */
  readonly graceMs: number;
  /**
   * Pods bound here that are not terminal — admitted or not (upstream
   * `GetActivePods`). Devices of other pods return to the pool. Default: none.
   */
  readonly activePods?: () => readonly V1Pod[];
  /** False until the pod sources delivered their initial lists (nothing is freed before). Default: true. */
  readonly sourcesReady?: () => boolean;
  /** Dial timeout for plugins (default 10 s, upstream's). */
  readonly dialTimeoutMs?: number;
}

/** A device as the podresources API reports it. */
export interface ContainerDevicesInfo {
  resourceName: string;
  deviceIds: string[];
  numaNodes: number[];
}

const UNEXPECTED = 'UnexpectedAdmissionError';

const isRestartableInit = (c: V1Container) => c.restartPolicy === 'Always';

/** Hosts device plugins. */
export class DeviceManager {
  private readonly endpoints = new Map<string, DeviceEndpoint>();
  private readonly all = new Map<string, Map<string, Device__Output>>();
  private readonly healthy = new Map<string, Set<string>>();
  private readonly unhealthy = new Map<string, Set<string>>();
  private readonly removed = new Set<string>();
  private readonly pods = new PodDevices();
  private readonly listeners = new Set<() => void>();
  private readonly healthListeners = new Set<(podUIDs: string[]) => void>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly log: Logger;
  private readonly graceMs: number;
  private lock: Promise<unknown> = Promise.resolve();
  private notifyQueued = false;
  private stopped = false;

  constructor(private readonly o: DeviceManagerOptions) {
    this.log = o.log;
    this.graceMs = o.graceMs;
  }

  /** Loads the checkpoint (a bad one is logged and ignored, as upstream); its allocations need the protocol's codec, loaded first. */
  async start(): Promise<void> {
    let data;
    try {
      data = readCheckpoint(this.o.dir);
    } catch (e) {
      this.log.error({ err: String(e) }, 'Continue after failing to read checkpoint file. Device allocation info may NOT be up-to-date');
      return;
    }
    if (!data) return;
    if ((data.PodDeviceEntries ?? []).length > 0) await loadDevicePlugin();
    this.pods.fromCheckpoint(data.PodDeviceEntries ?? [], (entry, err) =>
      this.log.error(
        { podUID: entry.PodUID, containerName: entry.ContainerName, resourceName: entry.ResourceName, err: errorDetail(err) },
        "Can't unmarshal allocResp",
      ),
    );
    for (const resource of Object.keys(data.RegisteredDevices ?? {})) {
      this.healthy.set(resource, new Set());
      this.unhealthy.set(resource, new Set());
      const ep = DeviceEndpoint.stopped(resource);
      this.endpoints.set(resource, ep);
      this.scheduleGraceCheck(ep);
    }
    this.log.info({ pods: this.pods.pods().size, resources: Object.keys(data.RegisteredDevices ?? {}) }, 'read device plugin checkpoint');
  }

  /** Stops every endpoint and timer (the checkpoint stays). */
  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const ep of this.endpoints.values()) ep.stop();
  }

  /** Calls `fn` (coalesced) when capacity or allocatable may have changed. Returns an unsubscribe function. */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /**
   * Calls `fn` with the UIDs of the pods holding devices whose reported health
   * changed (or that were reported again after being gone), so their status is
   * rebuilt. Returns an unsubscribe function.
   */
  onHealthChange(fn: (podUIDs: string[]) => void): () => void {
    this.healthListeners.add(fn);
    return () => this.healthListeners.delete(fn);
  }

  private notify(): void {
    if (this.notifyQueued || this.stopped) return;
    this.notifyQueued = true;
    setImmediate(() => {
      this.notifyQueued = false;
      for (const fn of this.listeners) {
        try {
          fn();
        } catch (e) {
          this.log.warn({ err: String(e) }, 'device change listener failed');
        }
      }
    });
  }

  /**
   * Connects to a plugin for `resourceName` at `socketPath` and starts its
   * ListAndWatch. A registration for a resource that already has an endpoint
   * replaces it (the old connection is closed). Rejects when the plugin
   * cannot be dialled or its options read; the previous endpoint then stays.
   */
  async registerEndpoint(resourceName: string, socketPath: string, signal?: AbortSignal): Promise<void> {
    if (!isExtendedResourceName(resourceName)) throw nodeletError('NDL_PLUGIN_VALIDATION', `the ResourceName "${resourceName}" is invalid`);
    const ep = await DeviceEndpoint.connect(resourceName, socketPath, signal, this.o.dialTimeoutMs);
    if (this.stopped) {
      ep.stop();
      throw nodeletError('NDL_PLUGIN_REGISTER', 'device manager stopped');
    }
    const old = this.endpoints.get(resourceName);
    this.endpoints.set(resourceName, ep);
    this.removed.delete(resourceName);
    old?.stop();
    this.log.info(
      {
        resourceName,
        endpoint: socketPath,
        preStartRequired: ep.options?.pre_start_required,
        preferredAllocation: ep.options?.get_preferred_allocation_available,
        replaced: old !== undefined,
      },
      'Device plugin connected',
    );
    ep.run(this.listener);
  }

  /** Stops the endpoint of `resourceName` if it is the one at `socketPath` (any, when omitted). */
  deregisterEndpoint(resourceName: string, socketPath?: string): void {
    const ep = this.endpoints.get(resourceName);
    if (!ep || ep.isStopped() || (socketPath !== undefined && ep.socketPath !== socketPath)) return;
    ep.stop();
    this.disconnected(ep, 'plugin deregistered');
  }

  private readonly listener: EndpointListener = {
    devices: (ep, devices) => this.devices(ep, devices),
    stopped: (ep, reason) => this.disconnected(ep, reason),
  };

  private devices(ep: DeviceEndpoint, devices: Device__Output[]): void {
    const r = ep.resourceName;
    if (this.endpoints.get(r) !== ep) return;
    const before = this.all.get(r);
    const all = new Map<string, Device__Output>();
    const healthy = new Set<string>();
    const unhealthy = new Set<string>();
    const changed = new Set<string>();
    for (const d of devices) {
      // Upstream: a device whose health differs from the last report, or one not in it (it may
      // have been gone for a while yet still be assigned to a pod), updates its pod's status.
      if (before?.get(d.ID)?.health !== d.health) changed.add(d.ID);
      all.set(d.ID, d);
      (d.health === HEALTHY ? healthy : unhealthy).add(d.ID);
    }
    this.all.set(r, all);
    this.healthy.set(r, healthy);
    this.unhealthy.set(r, unhealthy);
    const podUIDs = changed.size > 0 ? this.pods.podsHolding(r, changed) : [];
    this.saveCheckpoint();
    this.log.info({ resourceName: r, totalCount: devices.length, healthyCount: healthy.size }, 'Processed device updates for resource');
    this.notify();
    if (podUIDs.length > 0) this.notifyHealth(podUIDs);
  }

  private notifyHealth(podUIDs: string[]): void {
    for (const fn of this.healthListeners) {
      try {
        fn(podUIDs);
      } catch (e) {
        this.log.warn({ err: String(e) }, 'device health listener failed');
      }
    }
  }

  /** Upstream `PluginDisconnected`: every device unhealthy, stop time set, capacity kept for the grace period. */
  private disconnected(ep: DeviceEndpoint, reason: string): void {
    const r = ep.resourceName;
    if (this.endpoints.get(r) !== ep) return;
    const unhealthy = this.unhealthy.get(r) ?? new Set<string>();
    for (const id of this.healthy.get(r) ?? []) unhealthy.add(id);
    this.unhealthy.set(r, unhealthy);
    this.healthy.set(r, new Set());
    this.log.warn({ resourceName: r, reason, graceMs: this.graceMs }, 'Endpoint became unhealthy');
    this.scheduleGraceCheck(ep);
    this.notify();
  }

  private scheduleGraceCheck(ep: DeviceEndpoint): void {
    const wait = Math.max(0, (ep.stopTime ?? Date.now()) + this.graceMs - Date.now()) + 1;
    const t = setTimeout(() => {
      this.timers.delete(t);
      this.notify();
    }, wait);
    t.unref();
    this.timers.add(t);
  }

  /**
   * Upstream `GetCapacity` for the node status: capacity = all devices,
   * allocatable = healthy ones; a resource whose plugin stopped longer than
   * the grace period ago is dropped and reported as 0 from then on.
   */
  capacity(now = Date.now()): { capacity: Record<string, string>; allocatable: Record<string, string> } {
    const capacity: Record<string, string> = {};
    const allocatable: Record<string, string> = {};
    let dropped = false;
    for (const r of new Set([...this.healthy.keys(), ...this.unhealthy.keys()])) {
      const ep = this.endpoints.get(r);
      if (!ep || ep.graceExpired(this.graceMs, now)) {
        this.endpoints.delete(r);
        this.healthy.delete(r);
        this.unhealthy.delete(r);
        this.all.delete(r);
        this.removed.add(r);
        dropped = true;
        this.log.info({ resourceName: r }, 'Set capacity for removed resource to 0 on device removal');
        continue;
      }
      const healthy = this.healthy.get(r)?.size ?? 0;
      capacity[r] = String(healthy + (this.unhealthy.get(r)?.size ?? 0));
      allocatable[r] = String(healthy);
    }
    for (const r of this.removed) {
      capacity[r] = '0';
      allocatable[r] = '0';
    }
    if (dropped) this.saveCheckpoint();
    return { capacity, allocatable };
  }

  /**
   * Allocatable for the admission predicates (upstream `sanitizeNodeAllocatable`):
   * healthy devices, but at least as many as are already allocated, so pods
   * holding devices pass admission even while their plugin is away.
   */
  admissionAllocatable(): Record<string, string> {
    const out: Record<string, string> = {};
    const inUse = this.pods.devices();
    for (const r of new Set([...this.healthy.keys(), ...inUse.keys()])) {
      out[r] = String(Math.max(this.healthy.get(r)?.size ?? 0, inUse.get(r)?.size ?? 0));
    }
    return out;
  }

  /** True when the pod holds devices (per the allocation table). */
  holdsDevices(podUID: string): boolean {
    return this.pods.hasPod(podUID);
  }

  /** Upstream `isDevicePluginResource`: registered now, or held by some container. */
  isDevicePluginResource(resource: string): boolean {
    if (this.healthy.has(resource)) return true;
    return this.pods.devices().has(resource);
  }

  /** The device-plugin resources `pod` asks for (by container limits, as upstream). */
  requestsDevices(pod: V1Pod): boolean {
    const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
    return containers.some((c) => Object.keys(limitsOf(c)).some((r) => this.isDevicePluginResource(r) && quantityUnits(limitsOf(c)[r]) > 0));
  }

  /**
   * True when some container asks for a device-plugin resource but holds no
   * devices of it (not admitted through {@link allocate}, or lost): upstream
   * `GetDeviceRunContainerOptions` re-allocates then.
   */
  needsAllocation(pod: V1Pod): boolean {
    const uid = pod.metadata?.uid ?? '';
    const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
    return containers.some((c) =>
      Object.entries(limitsOf(c)).some(
        ([r, q]) => quantityUnits(q) > 0 && this.isDevicePluginResource(r) && this.pods.containerDevices(uid, c.name, r) === undefined,
      ),
    );
  }

  /**
   * Allocates devices for every container of `pod` that asks for a
   * device-plugin resource: reuses what the checkpoint holds, else picks
   * devices (GetPreferredAllocation when offered, else the first free
   * healthy ones) and calls Allocate per container; then PreStartContainer
   * where the plugin requires it. A failure rejects the pod with
   * `UnexpectedAdmissionError` and upstream's message; nothing stays allocated.
   */
  async allocate(pod: V1Pod): Promise<AdmitResult> {
    if (!this.requestsDevices(pod)) return { admit: true };
    const uid = pod.metadata?.uid ?? '';
    try {
      await this.exclusive(() => this.allocatePod(pod));
      await this.preStart(pod);
      return { admit: true };
    } catch (e) {
      this.pods.delete([uid]);
      this.saveCheckpoint();
      // Upstream's wording in the pod status: the catalogued error's detail, without the code's text.
      const message = `Allocate failed due to ${errorDetail(e)}, which is unexpected`;
      this.log.warn({ pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`, message }, 'Failed to admit pod');
      return { admit: false, reason: UNEXPECTED, message };
    }
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn, fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  private async allocatePod(pod: V1Pod): Promise<void> {
    this.updateAllocatedDevices();
    const uid = pod.metadata!.uid!;
    const reuse = new Map<string, Set<string>>();
    let changed = false;
    for (const c of pod.spec?.initContainers ?? []) {
      changed = (await this.allocateContainer(pod, c, reuse)) || changed;
      if (isRestartableInit(c)) this.pods.removeContainerAllocated(uid, c.name, reuse);
      else this.pods.addContainerAllocated(uid, c.name, reuse);
    }
    for (const c of pod.spec?.containers ?? []) {
      changed = (await this.allocateContainer(pod, c, reuse)) || changed;
      this.pods.removeContainerAllocated(uid, c.name, reuse);
    }
    if (changed) this.saveCheckpoint(true);
  }

  private async allocateContainer(pod: V1Pod, c: V1Container, reuse: Map<string, Set<string>>): Promise<boolean> {
    const uid = pod.metadata!.uid!;
    let changed = false;
    for (const [resource, q] of Object.entries(limitsOf(c))) {
      if (!this.isDevicePluginResource(resource)) continue;
      const ids = await this.devicesToAllocate(uid, c.name, resource, quantityUnits(q), reuse.get(resource) ?? new Set());
      if (!ids) continue;
      const ep = this.endpoints.get(resource);
      if (!ep) throw nodeletError('NDL_DEVICE_ALLOCATE', `unknown Device Plugin ${resource}`);
      const resp = await ep.allocate([...ids]);
      const first = resp.container_responses[0];
      if (!first) throw nodeletError('NDL_DEVICE_PLUGIN_RPC', `no containers return in allocation response ${JSON.stringify(resp)}`);
      this.pods.insert(uid, c.name, resource, this.perNuma(resource, ids), first);
      changed = true;
    }
    return changed;
  }

  /** Upstream `devicesToAllocate`; undefined when the container already holds what it asks for. */
  private async devicesToAllocate(uid: string, container: string, resource: string, required: number, reusable: Set<string>): Promise<Set<string> | undefined> {
    let needed = required;
    const held = this.pods.containerDevices(uid, container, resource);
    if (held) {
      needed -= held.size;
      if (needed !== 0)
        throw nodeletError(
          'NDL_DEVICE_ALLOCATE',
          `pod "${uid}" container "${container}" changed request for resource "${resource}" from ${held.size} to ${required}`,
        );
      return undefined;
    }
    if (needed === 0) return undefined;
    const healthy = this.healthy.get(resource);
    if (!healthy) throw nodeletError('NDL_DEVICE_ALLOCATE', `cannot allocate unregistered device ${resource}`);
    if (healthy.size === 0) throw nodeletError('NDL_DEVICE_ALLOCATE', `no healthy devices present; cannot allocate unhealthy devices ${resource}`);
    const allocated = new Set<string>();
    const take = (from: Iterable<string>): boolean => {
      for (const id of from) {
        if (needed === 0) break;
        if (allocated.has(id)) continue;
        allocated.add(id);
        needed--;
      }
      return needed === 0;
    };
    if (take(reusable)) return allocated;
    const inUse = this.pods.devices().get(resource) ?? new Set<string>();
    const available = [...healthy].filter((id) => !inUse.has(id) && !allocated.has(id));
    if (available.length < needed)
      throw nodeletError(
        'NDL_DEVICE_ALLOCATE',
        `requested number of devices unavailable for ${resource}. Requested: ${needed}, Available: ${available.length}`,
      );
    const preferred = await this.preferred(resource, [...available, ...allocated], [...allocated], required);
    if (take(preferred.filter((id) => available.includes(id)))) return allocated;
    if (take(available)) return allocated;
    throw nodeletError('NDL_DEVICE_ALLOCATE', `unexpectedly allocated less resources than required. Requested: ${required}, Got: ${required - needed}`);
  }

  private async preferred(resource: string, available: string[], mustInclude: string[], size: number): Promise<string[]> {
    const ep = this.endpoints.get(resource);
    if (!ep) throw nodeletError('NDL_DEVICE_ALLOCATE', `endpoint not found in cache for a registered resource: ${resource}`);
    if (!ep.options?.get_preferred_allocation_available) return [];
    try {
      const resp = await ep.getPreferredAllocation(available, mustInclude, size);
      return resp.container_responses[0]?.deviceIDs ?? [];
    } catch (e) {
      throw nodeletError('NDL_DEVICE_PLUGIN_RPC', `device plugin GetPreferredAllocation rpc failed with err: ${errorDetail(e)}`, e);
    }
  }

  private perNuma(resource: string, ids: Set<string>): DevicesPerNuma {
    const out: DevicesPerNuma = new Map();
    const add = (node: number, id: string) => {
      const l = out.get(node);
      if (l) l.push(id);
      else out.set(node, [id]);
    };
    for (const id of ids) {
      const nodes = this.all.get(resource)?.get(id)?.topology?.nodes ?? [];
      if (nodes.length === 0) add(NO_TOPOLOGY, id);
      for (const n of nodes) add(Number(n.ID), id);
    }
    return out;
  }

  private async preStart(pod: V1Pod): Promise<void> {
    const uid = pod.metadata!.uid!;
    for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
      for (const [resource, a] of this.pods.containerAllocations(uid, c.name)) {
        if (!(resource in limitsOf(c))) continue;
        const ep = this.endpoints.get(resource);
        if (!ep) throw nodeletError('NDL_DEVICE_ALLOCATE', `endpoint not found in cache for a registered resource: ${resource}`);
        // A stopped endpoint restored from the checkpoint has no options: skipped, as upstream.
        if (!ep.options?.pre_start_required) continue;
        try {
          await ep.preStartContainer([...idsOf(a.deviceIds)]);
        } catch (e) {
          throw nodeletError('NDL_DEVICE_PLUGIN_RPC', `device plugin PreStartContainer rpc failed with err: ${errorDetail(e)}`, e);
        }
      }
    }
  }

  /** Upstream `UpdateAllocatedDevices`: frees devices of pods that are no longer active. */
  updateAllocatedDevices(): void {
    if (this.o.sourcesReady && !this.o.sourcesReady()) return;
    const active = new Set(
      (this.o.activePods?.() ?? []).filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed').map((p) => p.metadata?.uid),
    );
    const gone = [...this.pods.pods()].filter((uid) => !active.has(uid));
    if (gone.length === 0) return;
    this.log.info({ podUIDs: gone }, 'Pods to be removed');
    this.pods.delete(gone);
    this.saveCheckpoint();
  }

  /** What the runtime must apply to a container (empty when it has no devices). */
  containerConfig(podUID: string, containerName: string): ContainerDeviceConfig {
    return this.pods.containerConfig(podUID, containerName);
  }

  /** A container's devices for the podresources API (one entry per device and NUMA node, as upstream). */
  containerDevices(podUID: string, containerName: string): ContainerDevicesInfo[] {
    const out: ContainerDevicesInfo[] = [];
    for (const [resourceName, a] of this.pods.containerAllocations(podUID, containerName)) {
      for (const [numa, ids] of a.deviceIds) for (const id of ids) out.push({ resourceName, deviceIds: [id], numaNodes: numa === NO_TOPOLOGY ? [] : [numa] });
    }
    return out;
  }

  /**
   * `allocatedResourcesStatus` entries of a container (upstream
   * `UpdateAllocatedResourcesStatus`): one per device-plugin resource it holds,
   * named after the resource, listing its devices with the health the plugin
   * last reported — `Healthy`, or `Unhealthy` for any other value; a device the
   * plugin does not list (now) counts as `Healthy`, as upstream. Sorted by
   * resource and device ID so an unchanged status compares equal.
   */
  allocatedResourcesStatus(podUID: string, containerName: string): V1ResourceStatus[] {
    const out: V1ResourceStatus[] = [];
    const held = [...this.pods.containerAllocations(podUID, containerName)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [resourceName, a] of held) {
      const ids = [...idsOf(a.deviceIds)].sort();
      if (ids.length === 0) continue;
      const reported = this.all.get(resourceName);
      const resources = ids.map((id) => {
        const health = reported?.get(id)?.health ?? HEALTHY;
        return { resourceID: id, health: health === HEALTHY ? HEALTHY : UNHEALTHY };
      });
      out.push({ name: resourceName, resources });
    }
    return out;
  }

  /** Healthy devices of every resource (upstream `GetAllocatableDevices`). */
  allocatableDevices(): ContainerDevicesInfo[] {
    const out: ContainerDevicesInfo[] = [];
    for (const [resourceName, ids] of this.healthy) {
      for (const id of ids) {
        const nodes = (this.all.get(resourceName)?.get(id)?.topology?.nodes ?? []).map((n) => Number(n.ID));
        if (nodes.length === 0) out.push({ resourceName, deviceIds: [id], numaNodes: [] });
        for (const n of nodes) out.push({ resourceName, deviceIds: [id], numaNodes: [n] });
      }
    }
    return out;
  }

  /** Resource names with an endpoint now (running or in its grace period). */
  resources(): string[] {
    return [...this.endpoints.keys()];
  }

  private saveCheckpoint(strict = false): void {
    const registered: Record<string, string[]> = {};
    for (const [r, ids] of [...this.healthy].sort(([a], [b]) => (a < b ? -1 : 1))) registered[r] = [...ids];
    try {
      writeCheckpoint(this.o.dir, { PodDeviceEntries: this.pods.toCheckpoint(), RegisteredDevices: registered });
    } catch (e) {
      this.log.error({ err: String(e) }, 'Failed to write checkpoint file');
      if (strict) throw nodeletError('NDL_DEVICE_CHECKPOINT', `failed to write checkpoint file "kubelet_internal_checkpoint": ${errorDetail(e)}`, e);
    }
  }
}

function limitsOf(c: V1Container): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...c.resources?.requests, ...c.resources?.limits })) {
    if (isExtendedResourceName(k)) out[k] = String(v);
  }
  return out;
}

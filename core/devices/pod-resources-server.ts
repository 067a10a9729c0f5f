/**
 * The podresources v1 API on `<root>/pod-resources/kubelet.sock` (upstream
 * `pkg/kubelet/apis/podresources/server_v1.go`): `List` (active pods),
 * `GetAllocatableResources` and `Get`. Devices come from the device manager,
 * `dynamic_resources` from the DRA manager (through `dynamicResources`);
 * nodelet has no CPU or memory managers, so `cpu_ids` and `memory` are empty.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import { grpcJs } from '../../sockets/grpc-js.ts';
import { listenGrpcLazily } from '../../sockets/lazy-server.ts';
import {
  loadPodResources,
  type ContainerDevices,
  type ContainerResources,
  type PodResources,
  type PodResourcesListerHandlers,
} from '../../sockets/podresources.ts';
import type { ContainerDevicesInfo, DeviceManager } from './device-manager.ts';

/** A container's prepared DRA claim as podresources reports it (upstream `GetDynamicResources`). */
export interface DynamicResourceInfo {
  readonly claimName: string;
  readonly claimNamespace: string;
  readonly resources: readonly { driverName: string; poolName: string; deviceName: string; cdiDevices: readonly string[] }[];
}

/** What the server reads. */
export interface PodResourcesSource {
  /** Pods bound here that are not terminal (upstream `GetActivePods`). */
  activePods(): readonly V1Pod[];
  readonly devices: Pick<DeviceManager, 'containerDevices' | 'allocatableDevices' | 'updateAllocatedDevices'>;
  /** The DRA claims prepared for a container (none without DRA). */
  dynamicResources?(pod: V1Pod, container: V1Container): readonly DynamicResourceInfo[];
}

function toWire(d: ContainerDevicesInfo): ContainerDevices {
  return { resource_name: d.resourceName, device_ids: d.deviceIds, topology: d.numaNodes.length ? { nodes: d.numaNodes.map((ID) => ({ ID })) } : null };
}

function containers(pod: V1Pod): V1Container[] {
  const sidecars = (pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always');
  return [...sidecars, ...(pod.spec?.containers ?? [])];
}

/** The PodResources message of one pod. */
function podResources(pod: V1Pod, source: PodResourcesSource): PodResources {
  const uid = pod.metadata?.uid ?? '';
  const list: ContainerResources[] = containers(pod).map((c) => ({
    name: c.name,
    devices: source.devices.containerDevices(uid, c.name).map(toWire),
    cpu_ids: [],
    memory: [],
    dynamic_resources: (source.dynamicResources?.(pod, c) ?? []).map((d) => ({
      claim_name: d.claimName,
      claim_namespace: d.claimNamespace,
      claim_resources: d.resources.map((r) => ({
        cdi_devices: r.cdiDevices.map((name) => ({ name })),
        driver_name: r.driverName,
        pool_name: r.poolName,
        device_name: r.deviceName,
      })),
    })),
  }));
  return { name: pod.metadata?.name ?? '', namespace: pod.metadata?.namespace ?? '', containers: list };
}

/** The service handlers (exported for tests). */
function podResourcesHandlers(source: PodResourcesSource): PodResourcesListerHandlers {
  return {
    List: (_call, cb) => {
      source.devices.updateAllocatedDevices();
      cb(null, { pod_resources: source.activePods().map((p) => podResources(p, source)) });
    },
    GetAllocatableResources: (_call, cb) => {
      cb(null, { devices: source.devices.allocatableDevices().map(toWire), cpu_ids: [], memory: [] });
    },
    Get: (call, cb) => {
      const { pod_name: name, pod_namespace: ns } = call.request;
      const pod = source.activePods().find((p) => p.metadata?.name === name && p.metadata?.namespace === ns);
      if (!pod) return cb({ code: grpcJs().status.UNKNOWN, details: `pod ${name} in namespace ${ns} not found` });
      cb(null, { pod_resources: podResources(pod, source) });
    },
  };
}

/** A running podresources server. */
export interface PodResourcesServer {
  readonly socketPath: string;
  stop(): Promise<void>;
}

/** Listens on `socketPath` (a stale socket is replaced; gRPC loads on the first connection: sockets/lazy-server.ts). */
export async function startPodResourcesServer(socketPath: string, source: PodResourcesSource, log: Logger): Promise<PodResourcesServer> {
  mkdirSync(dirname(socketPath), { recursive: true, mode: 0o750 });
  rmSync(socketPath, { force: true });
  const server = await listenGrpcLazily(
    socketPath,
    async (s) => s.addService((await loadPodResources()).PodResourcesLister.service, podResourcesHandlers(source)),
    log,
  );
  log.info({ socket: socketPath }, 'Starting pod resources API server');
  return {
    socketPath,
    async stop() {
      server.stop();
      rmSync(socketPath, { force: true });
    },
  };
}

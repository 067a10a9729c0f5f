/**
 * podresources v1 (k8s.io/kubelet/pkg/apis/podresources/v1): the
 * `PodResourcesLister` service the kubelet serves on
 * /var/lib/kubelet/pod-resources/kubelet.sock.
 */
import type { ProtoGrpcType } from './generated/podresources/api.ts';
import { loadProto, type GenericDefinition } from './load.ts';

export type { PodResourcesListerHandlers, PodResourcesListerClient, PodResourcesListerDefinition } from './generated/podresources/v1/PodResourcesLister.ts';
export type { PodResources } from './generated/podresources/v1/PodResources.ts';
export type { ContainerResources } from './generated/podresources/v1/ContainerResources.ts';
export type { ContainerDevices } from './generated/podresources/v1/ContainerDevices.ts';
export type { ListPodResourcesResponse } from './generated/podresources/v1/ListPodResourcesResponse.ts';
export type { AllocatableResourcesResponse } from './generated/podresources/v1/AllocatableResourcesResponse.ts';
export type { GetPodResourcesRequest__Output } from './generated/podresources/v1/GetPodResourcesRequest.ts';
export type { GetPodResourcesResponse } from './generated/podresources/v1/GetPodResourcesResponse.ts';

/** The loaded `v1` package. */
export type PodResourcesPackage = ProtoGrpcType['v1'];

/** Default socket of the pod resources API (`pkg/kubelet/apis/podresources`). */
export const POD_RESOURCES_SOCKET = '/var/lib/kubelet/pod-resources/kubelet.sock';

/**
 * The generated services of podresources/v1/api.proto (what {@link loadProto} builds the package from),
 * loaded with the first call: the socket is served lazily (lazy-server.ts), so an idle node never needs them.
 */
export async function loadServices(): Promise<readonly GenericDefinition[]> {
  const gen = await import('./generated/podresources/v1/api.ts');
  return [gen.PodResourcesListerDefinition];
}

/** Loads podresources v1 (cached). */
export async function loadPodResources(): Promise<PodResourcesPackage> {
  return loadProto<ProtoGrpcType>('podresources/v1/api.proto', await loadServices()).v1;
}

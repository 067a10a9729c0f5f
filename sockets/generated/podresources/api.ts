import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { AllocatableResourcesRequest as _v1_AllocatableResourcesRequest, AllocatableResourcesRequest__Output as _v1_AllocatableResourcesRequest__Output } from './v1/AllocatableResourcesRequest.ts';
import type { AllocatableResourcesResponse as _v1_AllocatableResourcesResponse, AllocatableResourcesResponse__Output as _v1_AllocatableResourcesResponse__Output } from './v1/AllocatableResourcesResponse.ts';
import type { CDIDevice as _v1_CDIDevice, CDIDevice__Output as _v1_CDIDevice__Output } from './v1/CDIDevice.ts';
import type { ClaimResource as _v1_ClaimResource, ClaimResource__Output as _v1_ClaimResource__Output } from './v1/ClaimResource.ts';
import type { ContainerDevices as _v1_ContainerDevices, ContainerDevices__Output as _v1_ContainerDevices__Output } from './v1/ContainerDevices.ts';
import type { ContainerMemory as _v1_ContainerMemory, ContainerMemory__Output as _v1_ContainerMemory__Output } from './v1/ContainerMemory.ts';
import type { ContainerResources as _v1_ContainerResources, ContainerResources__Output as _v1_ContainerResources__Output } from './v1/ContainerResources.ts';
import type { DynamicResource as _v1_DynamicResource, DynamicResource__Output as _v1_DynamicResource__Output } from './v1/DynamicResource.ts';
import type { GetPodResourcesRequest as _v1_GetPodResourcesRequest, GetPodResourcesRequest__Output as _v1_GetPodResourcesRequest__Output } from './v1/GetPodResourcesRequest.ts';
import type { GetPodResourcesResponse as _v1_GetPodResourcesResponse, GetPodResourcesResponse__Output as _v1_GetPodResourcesResponse__Output } from './v1/GetPodResourcesResponse.ts';
import type { ListPodResourcesRequest as _v1_ListPodResourcesRequest, ListPodResourcesRequest__Output as _v1_ListPodResourcesRequest__Output } from './v1/ListPodResourcesRequest.ts';
import type { ListPodResourcesResponse as _v1_ListPodResourcesResponse, ListPodResourcesResponse__Output as _v1_ListPodResourcesResponse__Output } from './v1/ListPodResourcesResponse.ts';
import type { NUMANode as _v1_NUMANode, NUMANode__Output as _v1_NUMANode__Output } from './v1/NUMANode.ts';
import type { PodResources as _v1_PodResources, PodResources__Output as _v1_PodResources__Output } from './v1/PodResources.ts';
import type { PodResourcesListerClient as _v1_PodResourcesListerClient, PodResourcesListerDefinition as _v1_PodResourcesListerDefinition } from './v1/PodResourcesLister.ts';
import type { TopologyInfo as _v1_TopologyInfo, TopologyInfo__Output as _v1_TopologyInfo__Output } from './v1/TopologyInfo.ts';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  v1: {
    AllocatableResourcesRequest: MessageTypeDefinition<_v1_AllocatableResourcesRequest, _v1_AllocatableResourcesRequest__Output>
    AllocatableResourcesResponse: MessageTypeDefinition<_v1_AllocatableResourcesResponse, _v1_AllocatableResourcesResponse__Output>
    CDIDevice: MessageTypeDefinition<_v1_CDIDevice, _v1_CDIDevice__Output>
    ClaimResource: MessageTypeDefinition<_v1_ClaimResource, _v1_ClaimResource__Output>
    ContainerDevices: MessageTypeDefinition<_v1_ContainerDevices, _v1_ContainerDevices__Output>
    ContainerMemory: MessageTypeDefinition<_v1_ContainerMemory, _v1_ContainerMemory__Output>
    ContainerResources: MessageTypeDefinition<_v1_ContainerResources, _v1_ContainerResources__Output>
    DynamicResource: MessageTypeDefinition<_v1_DynamicResource, _v1_DynamicResource__Output>
    GetPodResourcesRequest: MessageTypeDefinition<_v1_GetPodResourcesRequest, _v1_GetPodResourcesRequest__Output>
    GetPodResourcesResponse: MessageTypeDefinition<_v1_GetPodResourcesResponse, _v1_GetPodResourcesResponse__Output>
    ListPodResourcesRequest: MessageTypeDefinition<_v1_ListPodResourcesRequest, _v1_ListPodResourcesRequest__Output>
    ListPodResourcesResponse: MessageTypeDefinition<_v1_ListPodResourcesResponse, _v1_ListPodResourcesResponse__Output>
    NUMANode: MessageTypeDefinition<_v1_NUMANode, _v1_NUMANode__Output>
    PodResources: MessageTypeDefinition<_v1_PodResources, _v1_PodResources__Output>
    /**
     * PodResourcesLister is a service provided by the kubelet that provides information about the
     * node resources consumed by pods and containers on the node
     */
    PodResourcesLister: SubtypeConstructor<typeof grpc.Client, _v1_PodResourcesListerClient> & { service: _v1_PodResourcesListerDefinition }
    TopologyInfo: MessageTypeDefinition<_v1_TopologyInfo, _v1_TopologyInfo__Output>
  }
}


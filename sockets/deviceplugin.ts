/**
 * deviceplugin v1beta1 (k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1): the
 * kubelet serves `Registration`; each device plugin serves `DevicePlugin`.
 */
import type { ProtoGrpcType } from './generated/deviceplugin/api.ts';
import { loadProto, type GenericDefinition } from './load.ts';

export type { RegisterRequest__Output } from './generated/deviceplugin/v1beta1/RegisterRequest.ts';
export type { Device__Output } from './generated/deviceplugin/v1beta1/Device.ts';
export type { DevicePluginOptions__Output } from './generated/deviceplugin/v1beta1/DevicePluginOptions.ts';
export type { ListAndWatchResponse__Output } from './generated/deviceplugin/v1beta1/ListAndWatchResponse.ts';
export type { AllocateRequest } from './generated/deviceplugin/v1beta1/AllocateRequest.ts';
export type { AllocateResponse__Output } from './generated/deviceplugin/v1beta1/AllocateResponse.ts';
export type { PreStartContainerRequest } from './generated/deviceplugin/v1beta1/PreStartContainerRequest.ts';
export type { ContainerAllocateResponse__Output } from './generated/deviceplugin/v1beta1/ContainerAllocateResponse.ts';
export type { PreferredAllocationRequest } from './generated/deviceplugin/v1beta1/PreferredAllocationRequest.ts';
export type { PreferredAllocationResponse__Output } from './generated/deviceplugin/v1beta1/PreferredAllocationResponse.ts';
export type { RegistrationHandlers, RegistrationDefinition } from './generated/deviceplugin/v1beta1/Registration.ts';
export type { DevicePluginClient, DevicePluginHandlers, DevicePluginDefinition } from './generated/deviceplugin/v1beta1/DevicePlugin.ts';

/** The loaded `v1beta1` package. */
export type DevicePluginPackage = ProtoGrpcType['v1beta1'];

/** Constants from upstream `deviceplugin/v1beta1/constants.go`. */
export const DEVICE_PLUGIN_VERSION = 'v1beta1';
export const HEALTHY = 'Healthy';
export const UNHEALTHY = 'Unhealthy';
export const DEVICE_PLUGIN_PATH = '/var/lib/kubelet/device-plugins/';
export const KUBELET_SOCKET = `${DEVICE_PLUGIN_PATH}kubelet.sock`;
export const KUBELET_PRE_START_CONTAINER_RPC_TIMEOUT_SECS = 30;
export const SUPPORTED_VERSIONS: readonly string[] = ['v1beta1'];

/**
 * The generated services of deviceplugin/v1beta1/api.proto (what {@link loadProto} builds the package from).
 * Their code, and the protobuf runtime under it, loads with the first call, not with this module: a node
 * without device plugins never needs it (test/unit/cli/lazy-modules.test.ts).
 */
export async function loadServices(): Promise<readonly GenericDefinition[]> {
  const gen = await import('./generated/deviceplugin/v1beta1/api.ts');
  return [gen.RegistrationDefinition, gen.DevicePluginDefinition];
}

let loaded: DevicePluginPackage | undefined;

/** Loads deviceplugin v1beta1 (cached). */
export async function loadDevicePlugin(): Promise<DevicePluginPackage> {
  return (loaded ??= loadProto<ProtoGrpcType>('deviceplugin/v1beta1/api.proto', await loadServices()).v1beta1);
}

/** The package {@link loadDevicePlugin} loaded, for synchronous callers that run only after it (the checkpoint's codec). */
export function loadedDevicePlugin(): DevicePluginPackage {
  if (!loaded) throw new Error('deviceplugin v1beta1 is used before loadDevicePlugin() resolved');
  return loaded;
}

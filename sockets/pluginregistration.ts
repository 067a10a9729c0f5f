/**
 * pluginregistration v1 (k8s.io/kubelet/pkg/apis/pluginregistration/v1): the
 * `Registration` service a plugin serves on a socket in the kubelet's
 * plugins_registry directory. The kubelet is the client.
 */
import type { ProtoGrpcType } from './generated/pluginregistration/api.ts';
import { loadProto, type GenericDefinition } from './load.ts';

export type { PluginInfo, PluginInfo__Output } from './generated/pluginregistration/pluginregistration/PluginInfo.ts';
export type { RegistrationStatus, RegistrationStatus__Output } from './generated/pluginregistration/pluginregistration/RegistrationStatus.ts';
export type { RegistrationClient, RegistrationDefinition, RegistrationHandlers } from './generated/pluginregistration/pluginregistration/Registration.ts';

/** The loaded `pluginregistration` package: `Registration` is a typed client constructor with `.service`. */
export type PluginRegistrationPackage = ProtoGrpcType['pluginregistration'];

/** Plugin types the upstream kubelet knows (`pluginregistration/v1/constants.go`). */
export const CSI_PLUGIN = 'CSIPlugin';
export const DEVICE_PLUGIN = 'DevicePlugin';
export const DRA_PLUGIN = 'DRAPlugin';

/**
 * The generated services of pluginregistration/v1/api.proto (what {@link loadProto} builds the package from),
 * loaded with the first call: a node with no plugin in its registry never needs them.
 */
export async function loadServices(): Promise<readonly GenericDefinition[]> {
  const gen = await import('./generated/pluginregistration/v1/api.ts');
  return [gen.RegistrationDefinition];
}

/** Loads pluginregistration v1 (cached). */
export async function loadPluginRegistration(): Promise<PluginRegistrationPackage> {
  return loadProto<ProtoGrpcType>('pluginregistration/v1/api.proto', await loadServices()).pluginregistration;
}

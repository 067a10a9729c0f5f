/**
 * DRA v1beta1 (k8s.io/kubelet/pkg/apis/dra/v1beta1): the same `DRAPlugin`
 * service as v1 under the package `k8s.io.kubelet.pkg.apis.dra.v1beta1`,
 * for drivers that only offer `v1beta1.DRAPlugin` (upstream's kubelet falls
 * back to it). The messages are v1's minus `Device.share_id` (field 5,
 * optional), so v1's generated codecs read and write them byte for byte; only
 * the method paths differ. Derived from the generated v1 service definition
 * rather than generated again.
 */
import { makeGenericClientConstructor, type ChannelCredentials, type ClientOptions } from '@grpc/grpc-js';
import { DRAPluginService, type DRAPluginClient } from './dra.ts';

/** The name a driver lists in `supported_versions` for this service. */
export const DRA_PLUGIN_SERVICE_V1BETA1 = 'v1beta1.DRAPlugin';

const V1 = 'k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin';
const V1BETA1 = 'k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin';

/** The v1beta1 service definition: v1's codecs on the v1beta1 paths. */
export const DRAPluginV1beta1Service = {
  nodePrepareResources: { ...DRAPluginService.nodePrepareResources, path: DRAPluginService.nodePrepareResources.path.replace(V1, V1BETA1) },
  nodeUnprepareResources: { ...DRAPluginService.nodeUnprepareResources, path: DRAPluginService.nodeUnprepareResources.path.replace(V1, V1BETA1) },
};

/** The typed v1beta1 client constructor (the same client interface as v1). */
export const DRAPluginV1beta1Client = makeGenericClientConstructor(DRAPluginV1beta1Service, V1BETA1) as unknown as {
  new (address: string, credentials: ChannelCredentials, options?: Partial<ClientOptions>): DRAPluginClient;
};

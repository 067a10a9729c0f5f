/**
 * DRA kubelet plugin API (k8s.io/kubelet/pkg/apis/dra/v1 and v1beta1, the
 * same messages in two packages; v1beta1 lacks `Device.share_id`): the
 * `DRAPlugin` service a DRA driver serves on its socket; the kubelet is the
 * client. Interim: the descriptor is written out here (as JSON, not parsed
 * from a .proto) until sockets/ generates DRA like the other protocols; the
 * types below are hand-written to the loader options of load.ts.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { LOADER_OPTIONS } from './load.ts';

/** `Claim`. */
export interface DraClaim {
  namespace: string;
  uid: string;
  name: string;
}

/** `Device` as received (defaults filled in). */
export interface DraDevice__Output {
  request_names: string[];
  pool_name: string;
  device_name: string;
  cdi_device_ids: string[];
}

/** `NodePrepareResourcesResponse` as received. */
export interface NodePrepareResourcesResponse__Output {
  claims: Record<string, { devices: DraDevice__Output[]; error: string }>;
}

/** `NodeUnprepareResourcesResponse` as received. */
export interface NodeUnprepareResourcesResponse__Output {
  claims: Record<string, { error: string }>;
}

type Unary<Req, Res> = (req: Req, options: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res?: Res) => void) => grpc.ClientUnaryCall;

/** A `DRAPlugin` client (either version). */
export interface DraPluginClient extends grpc.Client {
  NodePrepareResources: Unary<{ claims: DraClaim[] }, NodePrepareResourcesResponse__Output>;
  NodeUnprepareResources: Unary<{ claims: DraClaim[] }, NodeUnprepareResourcesResponse__Output>;
}

/** The API versions, by the package name's last part. */
export type DraApiVersion = 'v1' | 'v1beta1';

function messages(withShareId: boolean): Record<string, unknown> {
  const claims = { fields: { claims: { rule: 'repeated', type: 'Claim', id: 1 } } };
  return {
    DRAPlugin: {
      methods: {
        NodePrepareResources: { requestType: 'NodePrepareResourcesRequest', responseType: 'NodePrepareResourcesResponse' },
        NodeUnprepareResources: { requestType: 'NodeUnprepareResourcesRequest', responseType: 'NodeUnprepareResourcesResponse' },
      },
    },
    NodePrepareResourcesRequest: claims,
    NodePrepareResourcesResponse: { fields: { claims: { keyType: 'string', type: 'NodePrepareResourceResponse', id: 1 } } },
    NodePrepareResourceResponse: { fields: { devices: { rule: 'repeated', type: 'Device', id: 1 }, error: { type: 'string', id: 2 } } },
    Device: {
      fields: {
        request_names: { rule: 'repeated', type: 'string', id: 1 },
        pool_name: { type: 'string', id: 2 },
        device_name: { type: 'string', id: 3 },
        cdi_device_ids: { rule: 'repeated', type: 'string', id: 4 },
        ...(withShareId ? { share_id: { type: 'string', id: 5, options: { proto3_optional: true } } } : {}),
      },
    },
    NodeUnprepareResourcesRequest: claims,
    NodeUnprepareResourcesResponse: { fields: { claims: { keyType: 'string', type: 'NodeUnprepareResourceResponse', id: 1 } } },
    NodeUnprepareResourceResponse: { fields: { error: { type: 'string', id: 1 } } },
    Claim: { fields: { namespace: { type: 'string', id: 1 }, uid: { type: 'string', id: 2 }, name: { type: 'string', id: 3 } } },
  };
}

const DESCRIPTOR = {
  nested: {
    k8s: {
      nested: {
        io: {
          nested: {
            kubelet: {
              nested: { pkg: { nested: { apis: { nested: { dra: { nested: { v1: { nested: messages(true) }, v1beta1: { nested: messages(false) } } } } } } } },
            },
          },
        },
      },
    },
  },
};

let loaded: grpc.GrpcObject | undefined;

/** The `DRAPlugin` client constructor of `version` (service `k8s.io.kubelet.pkg.apis.dra.<version>.DRAPlugin`). */
export function loadDraPlugin(version: DraApiVersion): grpc.ServiceClientConstructor {
  loaded ??= grpc.loadPackageDefinition(protoLoader.fromJSON(DESCRIPTOR as Parameters<typeof protoLoader.fromJSON>[0], LOADER_OPTIONS));
  const pkg = (((((loaded.k8s as grpc.GrpcObject).io as grpc.GrpcObject).kubelet as grpc.GrpcObject).pkg as grpc.GrpcObject).apis as grpc.GrpcObject)
    .dra as grpc.GrpcObject;
  return (pkg[version] as grpc.GrpcObject).DRAPlugin as grpc.ServiceClientConstructor;
}

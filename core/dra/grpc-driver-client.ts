/**
 * {@link DraDriverClient} over gRPC: the `DRAPlugin` service of a driver's
 * unix socket (sockets/dra.ts, and sockets/dra-v1beta1.ts for the fallback),
 * in the version chosen at registration. The channel connects lazily (as
 * upstream's `grpc.NewClient`) and reconnects by itself; each call has the
 * registration's timeout (upstream's default: 45 s).
 */
import * as grpc from '@grpc/grpc-js';
import { deadlineIn, grpcErrorText, unixTarget } from '../../sockets/dial.ts';
import { DRAPluginClient, type NodePrepareResourcesResponse, type NodeUnprepareResourcesResponse } from '../../sockets/dra.ts';
import { DRAPluginV1beta1Client } from '../../sockets/dra-v1beta1.ts';
import { nodeletError } from '../errors/index.ts';
import type { DraClientFactory, DraDriverClient, PrepareResult } from './driver-client.ts';

/** Upstream's default timeout of a DRA call. */
const DRA_CALL_TIMEOUT_MS = 45_000;

/** Connects to `endpoint` (a unix socket) speaking `version` of the DRAPlugin service. */
export const grpcDraClient: DraClientFactory = (endpoint, version, timeoutMs) => {
  const Ctor = version === 'v1.DRAPlugin' ? DRAPluginClient : DRAPluginV1beta1Client;
  const client = new Ctor(unixTarget(endpoint), grpc.credentials.createInsecure(), {
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 1000,
  });
  const options = (): Partial<grpc.CallOptions> => ({ deadline: deadlineIn(timeoutMs > 0 ? timeoutMs : DRA_CALL_TIMEOUT_MS) });
  const settle =
    <T>(done: (v: T) => void, fail: (e: unknown) => void) =>
    (err: grpc.ServiceError | null, res: T) =>
      err ? fail(nodeletError('NDL_DRA_DRIVER_RPC', grpcErrorText(err), err)) : done(res);
  const out: DraDriverClient = {
    async nodePrepareResources(claims) {
      const res = await new Promise<NodePrepareResourcesResponse>((done, fail) =>
        client.nodePrepareResources({ claims: claims.map((c) => ({ ...c })) }, new grpc.Metadata(), options(), settle(done, fail)),
      );
      const r: Record<string, PrepareResult> = {};
      for (const [uid, v] of Object.entries(res.claims ?? {})) {
        r[uid] = {
          error: v.error || undefined,
          devices: (v.devices ?? []).map((d) => ({
            requestNames: d.request_names,
            poolName: d.pool_name,
            deviceName: d.device_name,
            cdiDeviceIds: d.cdi_device_ids,
          })),
        };
      }
      return r;
    },
    async nodeUnprepareResources(claims) {
      const res = await new Promise<NodeUnprepareResourcesResponse>((done, fail) =>
        client.nodeUnprepareResources({ claims: claims.map((c) => ({ ...c })) }, new grpc.Metadata(), options(), settle(done, fail)),
      );
      const r: Record<string, { error?: string }> = {};
      for (const [uid, v] of Object.entries(res.claims ?? {})) r[uid] = { error: v.error || undefined };
      return r;
    },
    close: () => client.close(),
  };
  return out;
};

/**
 * {@link DraDriverClient} over gRPC: the `DRAPlugin` service of a driver's
 * unix socket, in the version chosen at registration. The channel connects
 * lazily (as upstream's `grpc.NewClient`) and reconnects by itself; each call
 * has the registration's timeout (upstream's default: 45 s).
 */
import * as grpc from '@grpc/grpc-js';
import { deadlineIn, grpcErrorText, unixTarget } from '../../sockets/dial.ts';
import { loadDraPlugin, type DraClaim, type DraPluginClient } from '../../sockets/dra.ts';
import { nodeletError } from '../errors/index.ts';
import type { DraClientFactory, DraClaimRef, DraDriverClient, PrepareResult } from './driver-client.ts';

/** Upstream's default timeout of a DRA call. */
export const DRA_CALL_TIMEOUT_MS = 45_000;

function call<Res>(
  fn: (req: { claims: DraClaim[] }, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r?: Res) => void) => unknown,
  claims: readonly DraClaimRef[],
  timeoutMs: number,
): Promise<Res> {
  return new Promise((done, fail) => {
    fn({ claims: claims.map((c) => ({ namespace: c.namespace, uid: c.uid, name: c.name })) }, { deadline: deadlineIn(timeoutMs) }, (err, res) => {
      if (err || !res) fail(nodeletError('NDL_DRA_DRIVER_RPC', grpcErrorText(err ?? 'empty response'), err));
      else done(res);
    });
  });
}

/** Connects to `endpoint` (a unix socket) speaking `version` of the DRAPlugin service. */
export const grpcDraClient: DraClientFactory = (endpoint, version, timeoutMs) => {
  const Ctor = loadDraPlugin(version === 'v1.DRAPlugin' ? 'v1' : 'v1beta1');
  const client = new Ctor(unixTarget(endpoint), grpc.credentials.createInsecure(), {
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 1000,
  }) as unknown as DraPluginClient;
  const ms = timeoutMs > 0 ? timeoutMs : DRA_CALL_TIMEOUT_MS;
  const out: DraDriverClient = {
    async nodePrepareResources(claims) {
      const res = await call(client.NodePrepareResources.bind(client), claims, ms);
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
      const res = await call(client.NodeUnprepareResources.bind(client), claims, ms);
      const r: Record<string, { error?: string }> = {};
      for (const [uid, v] of Object.entries(res.claims ?? {})) r[uid] = { error: v.error || undefined };
      return r;
    },
    close: () => client.close(),
  };
  return out;
};

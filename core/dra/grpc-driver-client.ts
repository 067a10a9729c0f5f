/**
 * {@link DraDriverClient} over gRPC: the `DRAPlugin` service of a driver's
 * unix socket (sockets/dra.ts, and sockets/dra-v1beta1.ts for the fallback),
 * in the version chosen at registration. The channel connects lazily (as
 * upstream's `grpc.NewClient`) and reconnects by itself; each call has the
 * registration's timeout (upstream's default: 45 s). `watchConnection` reports
 * the channel's connectivity (READY or not) to the driver registry, which
 * wipes the slices of a driver whose connection stays lost (upstream's
 * `HandleConn`). When the driver offers
 * `v1alpha1.DRAResourceHealth`, `watchHealth` opens its `NodeWatchResources`
 * stream (sockets/dra-health.ts).
 */
import * as grpc from '@grpc/grpc-js';
import { deadlineIn, grpcErrorText, unixTarget } from '../../sockets/dial.ts';
import { DRAPluginClient, type NodePrepareResourcesResponse, type NodeUnprepareResourcesResponse } from '../../sockets/dra.ts';
import { DRAPluginV1beta1Client } from '../../sockets/dra-v1beta1.ts';
import { DRAResourceHealthClient, type DeviceHealth, type NodeWatchResourcesResponse } from '../../sockets/dra-health.ts';
import { nodeletError } from '../errors/index.ts';
import type { DraClientFactory, DraDriverClient, PrepareResult } from './driver-client.ts';
import type { DeviceHealthReport, DeviceHealthStatus } from './health-info.ts';

const HEALTH: Record<string, DeviceHealthStatus> = { HEALTHY: 'Healthy', UNHEALTHY: 'Unhealthy' };

/** A `DeviceHealth` message as a report (upstream `buildDeviceHealth`). */
function toReport(d: DeviceHealth): DeviceHealthReport {
  return {
    poolName: d.device?.pool_name ?? '',
    deviceName: d.device?.device_name ?? '',
    health: HEALTH[d.health] ?? 'Unknown',
    timeoutSeconds: Number(d.health_check_timeout_seconds),
    message: d.message,
  };
}

/** Upstream's default timeout of a DRA call. */
const DRA_CALL_TIMEOUT_MS = 45_000;

/** Connects to `endpoint` (a unix socket) speaking `version` of the DRAPlugin service. */
export const grpcDraClient: DraClientFactory = (endpoint, version, timeoutMs, health) => {
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
    watchConnection(fn) {
      // Upstream calls conn.Connect() at registration and again on every ConnEnd, so a driver
      // that comes back is noticed; getConnectivityState(true) does both here.
      const channel = client.getChannel();
      let following = true;
      let last: boolean | undefined;
      const follow = () => {
        if (!following) return;
        let state = channel.getConnectivityState(false);
        if (state === grpc.connectivityState.SHUTDOWN) return;
        if (state === grpc.connectivityState.IDLE) state = channel.getConnectivityState(true);
        const connected = state === grpc.connectivityState.READY;
        if (connected !== last) {
          last = connected;
          fn(connected);
        }
        channel.watchConnectivityState(state, Infinity, follow);
      };
      follow();
      return () => {
        following = false;
      };
    },
    close: () => {
      for (const cancel of [...watches]) cancel();
      healthClient?.close();
      client.close();
    },
  };
  // The health service lives on the same socket: its own client (channel) with no deadline on the stream.
  const healthClient = health ? new DRAResourceHealthClient(unixTarget(endpoint), grpc.credentials.createInsecure()) : undefined;
  const watches = new Set<() => void>();
  if (healthClient) {
    out.watchHealth = (h) => {
      const call = healthClient.nodeWatchResources({});
      let ended = false;
      const end = (e?: Error) => {
        if (ended) return;
        ended = true;
        watches.delete(cancel);
        h.onEnd(e);
      };
      const cancel = () => {
        call.cancel();
        end();
      };
      watches.add(cancel);
      call.on('data', (r: NodeWatchResourcesResponse) => h.onReport(r.devices.map(toReport)));
      call.on('error', (e: grpc.ServiceError) => end(e.code === grpc.status.CANCELLED ? undefined : nodeletError('NDL_DRA_DRIVER_RPC', grpcErrorText(e), e)));
      call.on('end', () => end());
      return cancel;
    };
  }
  return out;
};

// grpcDraClient against a real grpc-js server on a unix socket: v1 and the
// v1beta1 fallback reach their own method paths, results map back per claim
// UID, a gRPC error becomes NDL_DRA_DRIVER_RPC, and the v1alpha1 health
// stream's reports arrive as DeviceHealthReports until the client closes, and
// the connection is followed (lost when the server goes, back when it is back).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { unixTarget } from '../../../sockets/dial.ts';
import { DRAPluginService, NodePrepareResourcesResponse, type DRAPluginServer } from '../../../sockets/dra.ts';
import { DRAPluginV1beta1Service } from '../../../sockets/dra-v1beta1.ts';
import { DRAResourceHealthService, NodeWatchResourcesResponse, type DRAResourceHealthServer } from '../../../sockets/dra-health.ts';
import { grpcDraClient } from '../../../core/dra/grpc-driver-client.ts';
import type { DeviceHealthReport } from '../../../core/dra/health-info.ts';

describe('grpcDraClient', () => {
  const cleanups: Array<() => void> = [];
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });

  /** Serves the DRA services on a fresh socket, or on `at` (a restarted driver); `stop()` ends that server. */
  async function serve(at?: string): Promise<{ sock: string; seen: string[]; stop(): void }> {
    const dir = at === undefined ? mkdtempSync(join(tmpdir(), 'nodelet-dra-grpc-')) : undefined;
    const sock = at ?? join(dir!, 'dra.sock');
    const seen: string[] = [];
    const impl = (version: string): DRAPluginServer => ({
      nodePrepareResources: (call, cb) => {
        seen.push(`${version} prepare ${call.request.claims.map((c) => c.uid).join(',')}`);
        if (call.request.claims.some((c) => c.uid === 'bad')) return cb({ code: grpc.status.UNAVAILABLE, details: 'driver busy' });
        cb(
          null,
          NodePrepareResourcesResponse.fromPartial({
            claims: {
              u1: { devices: [{ request_names: ['req'], pool_name: 'p', device_name: 'd0', cdi_device_ids: ['v.io/c=d0'] }] },
              u2: { error: 'no such claim' },
            },
          }),
        );
      },
      nodeUnprepareResources: (call, cb) => {
        seen.push(`${version} unprepare ${call.request.claims.map((c) => c.uid).join(',')}`);
        cb(null, { claims: { u1: { error: '' } } });
      },
    });
    const server = new grpc.Server();
    const health: DRAResourceHealthServer = {
      nodeWatchResources: (call) => {
        seen.push('watch');
        call.write(
          NodeWatchResourcesResponse.fromPartial({
            devices: [
              { device: { pool_name: 'p', device_name: 'd0' }, health: 'HEALTHY', last_updated_time: '1', health_check_timeout_seconds: '60' },
              { device: { pool_name: 'p', device_name: 'd1' }, health: 'UNHEALTHY', message: 'ECC errors' },
              { device: { pool_name: 'p', device_name: 'd2' }, health: 'UNKNOWN' },
            ],
          }),
        );
        call.on('cancelled', () => seen.push('watch cancelled'));
      },
    };
    server.addService(DRAResourceHealthService, health);
    server.addService(DRAPluginService, impl('v1'));
    server.addService(DRAPluginV1beta1Service, impl('v1beta1'));
    await new Promise<void>((ok, fail) => server.bindAsync(unixTarget(sock), grpc.ServerCredentials.createInsecure(), (e) => (e ? fail(e) : ok())));
    cleanups.push(() => {
      server.forceShutdown();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });
    return { sock, seen, stop: () => server.forceShutdown() };
  }

  it('calls v1 and v1beta1 on their own paths and maps the results', async () => {
    const { sock, seen } = await serve();
    const claims = [
      { namespace: 'ns', uid: 'u1', name: 'c1' },
      { namespace: 'ns', uid: 'u2', name: 'c2' },
    ];
    for (const v of ['v1.DRAPlugin', 'v1beta1.DRAPlugin'] as const) {
      const c = grpcDraClient(sock, v, 5000, false);
      cleanups.push(() => c.close());
      expect(await c.nodePrepareResources(claims)).toEqual({
        u1: { error: undefined, devices: [{ requestNames: ['req'], poolName: 'p', deviceName: 'd0', cdiDeviceIds: ['v.io/c=d0'] }] },
        u2: { error: 'no such claim', devices: [] },
      });
      expect(await c.nodeUnprepareResources([claims[0]!])).toEqual({ u1: { error: undefined } });
    }
    expect(seen).toEqual(['v1 prepare u1,u2', 'v1 unprepare u1', 'v1beta1 prepare u1,u2', 'v1beta1 unprepare u1']);
  });

  it('watchHealth reads the NodeWatchResources stream as reports; close() cancels it and ends the watch cleanly', async () => {
    const { sock, seen } = await serve();
    const plain = grpcDraClient(sock, 'v1.DRAPlugin', 5000, false);
    expect(plain.watchHealth).toBeUndefined();
    plain.close();
    const c = grpcDraClient(sock, 'v1.DRAPlugin', 5000, true);
    const reports: DeviceHealthReport[][] = [];
    const ended: (Error | undefined)[] = [];
    c.watchHealth!({ onReport: (d) => reports.push([...d]), onEnd: (e) => ended.push(e) });
    await vi.waitFor(() => expect(reports).toHaveLength(1));
    expect(reports[0]).toEqual([
      { poolName: 'p', deviceName: 'd0', health: 'Healthy', timeoutSeconds: 60, message: '' },
      { poolName: 'p', deviceName: 'd1', health: 'Unhealthy', timeoutSeconds: 0, message: 'ECC errors' },
      { poolName: 'p', deviceName: 'd2', health: 'Unknown', timeoutSeconds: 0, message: '' },
    ]);
    c.close();
    expect(ended).toEqual([undefined]);
    await vi.waitFor(() => expect(seen).toContain('watch cancelled'));
  });

  it('watchConnection connects without a call, reports the connection lost when the driver goes, and connected again when it is back', async () => {
    const first = await serve();
    const c = grpcDraClient(first.sock, 'v1.DRAPlugin', 5000, false);
    cleanups.push(() => c.close());
    const seen: boolean[] = [];
    const unwatch = c.watchConnection!((connected) => seen.push(connected));
    await vi.waitFor(() => expect(seen).toEqual([false, true]), { timeout: 10_000 });
    first.stop(); // the driver died
    await vi.waitFor(() => expect(seen).toEqual([false, true, false]), { timeout: 10_000 });
    await serve(first.sock); // it is back on the same socket; the channel reconnects by itself
    await vi.waitFor(() => expect(seen).toEqual([false, true, false, true]), { timeout: 10_000 });
    unwatch();
    c.close();
    expect(seen).toEqual([false, true, false, true]);
  });

  it('a gRPC error is NDL_DRA_DRIVER_RPC with the status text', async () => {
    const { sock } = await serve();
    const c = grpcDraClient(sock, 'v1.DRAPlugin', 5000, false);
    cleanups.push(() => c.close());
    await expect(c.nodePrepareResources([{ namespace: 'ns', uid: 'bad', name: 'x' }])).rejects.toMatchObject({
      code: 'NDL_DRA_DRIVER_RPC',
      message: expect.stringContaining('rpc error: code = Unavailable desc = driver busy'),
    });
  });
});

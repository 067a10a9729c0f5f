// The generated DRA v1 code (sockets/dra.ts) talks the upstream wire protocol:
// a grpc-js server built from DRAPluginService and a DRAPluginClient on a unix
// socket exchange prepare/unprepare calls, maps and repeated fields intact.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clientOn, dialUnix, unixTarget } from '../../../sockets/dial.ts';
import {
  DRA_PLUGIN_SERVICE_V1,
  DRAPluginClient,
  DRAPluginService,
  NodePrepareResourcesRequest,
  NodePrepareResourcesResponse,
  type DRAPluginServer,
} from '../../../sockets/dra.ts';

describe('DRA v1 generated code', () => {
  let dir: string;
  let server: grpc.Server | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ndl-dra-'));
  });
  afterEach(async () => {
    if (server) await new Promise<void>((r) => server!.tryShutdown(() => r()));
    server = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('has the upstream method paths and registration name', () => {
    expect(DRAPluginService.nodePrepareResources.path).toBe('/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources');
    expect(DRAPluginService.nodeUnprepareResources.path).toBe('/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources');
    expect(DRA_PLUGIN_SERVICE_V1).toBe('v1.DRAPlugin');
  });

  it('encodes and decodes a request byte for byte', () => {
    const req = NodePrepareResourcesRequest.fromPartial({ claims: [{ namespace: 'ns', uid: 'u1', name: 'c1' }] });
    const bytes = NodePrepareResourcesRequest.encode(req).finish();
    // field 1 (claims), length-delimited; inside: namespace=1, uid=2, name=3.
    expect(Buffer.from(bytes).toString('hex')).toBe('0a0c0a026e73120275311a026331');
    expect(NodePrepareResourcesRequest.decode(bytes)).toEqual(req);
  });

  it('serves and calls NodePrepareResources / NodeUnprepareResources on a unix socket', async () => {
    const sock = join(dir, 'dra.sock');
    const seen: string[] = [];
    const impl: DRAPluginServer = {
      nodePrepareResources: (call, cb) => {
        seen.push(...call.request.claims.map((c) => `${c.namespace}/${c.name}`));
        cb(
          null,
          NodePrepareResourcesResponse.fromPartial({
            claims: {
              u1: { devices: [{ request_names: ['gpu'], pool_name: 'p', device_name: 'd0', cdi_device_ids: ['vendor.com/gpu=d0'] }] },
              u2: { error: 'no such claim' },
            },
          }),
        );
      },
      nodeUnprepareResources: (call, cb) => cb(null, { claims: Object.fromEntries(call.request.claims.map((c) => [c.uid, { error: '' }])) }),
    };
    server = new grpc.Server();
    server.addService(DRAPluginService, impl);
    await new Promise<void>((ok, fail) => server!.bindAsync(unixTarget(sock), grpc.ServerCredentials.createInsecure(), (e) => (e ? fail(e) : ok())));

    const client = clientOn(DRAPluginClient, await dialUnix(sock, 5_000));
    const prepared = await new Promise<NodePrepareResourcesResponse>((ok, fail) =>
      client.nodePrepareResources(
        {
          claims: [
            { namespace: 'ns', uid: 'u1', name: 'c1' },
            { namespace: 'ns', uid: 'u2', name: 'c2' },
          ],
        },
        (e, r) => (e ? fail(e) : ok(r)),
      ),
    );
    expect(seen).toEqual(['ns/c1', 'ns/c2']);
    expect(prepared.claims.u1.devices).toEqual([{ request_names: ['gpu'], pool_name: 'p', device_name: 'd0', cdi_device_ids: ['vendor.com/gpu=d0'] }]);
    expect(prepared.claims.u2).toEqual({ devices: [], error: 'no such claim' });
    const unprepared = await new Promise<unknown>((ok, fail) =>
      client.nodeUnprepareResources({ claims: [{ namespace: 'ns', uid: 'u1', name: 'c1' }] }, (e, r) => (e ? fail(e) : ok(r))),
    );
    expect(unprepared).toEqual({ claims: { u1: { error: '' } } });
    client.close();
  });
});

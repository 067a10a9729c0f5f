// The typed loaders load the right services, and dialUnix/clientOn talk to a
// real gRPC server on a unix socket (two services sharing one channel).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadCsi, type IdentityHandlers, type NodeHandlers } from '../../../sockets/csi.ts';
import { loadDevicePlugin } from '../../../sockets/deviceplugin.ts';
import { clientOn, dialUnix, grpcErrorText, unixTarget } from '../../../sockets/dial.ts';
import { loadPluginRegistration } from '../../../sockets/pluginregistration.ts';
import { loadPodResources } from '../../../sockets/podresources.ts';

const methods = (svc: { service: grpc.ServiceDefinition }): string[] => Object.keys(svc.service).sort();

describe('typed loaders', () => {
  it('expose the upstream services and methods', async () => {
    expect(methods((await loadPluginRegistration()).Registration)).toEqual(['GetInfo', 'NotifyRegistrationStatus']);
    expect(methods((await loadDevicePlugin()).Registration)).toEqual(['Register']);
    expect(methods((await loadDevicePlugin()).DevicePlugin)).toEqual([
      'Allocate',
      'GetDevicePluginOptions',
      'GetPreferredAllocation',
      'ListAndWatch',
      'PreStartContainer',
    ]);
    expect((await loadDevicePlugin()).DevicePlugin.service.ListAndWatch.responseStream).toBe(true);
    expect(methods((await loadPodResources()).PodResourcesLister)).toEqual(['Get', 'GetAllocatableResources', 'List']);
    expect(methods(loadCsi().Identity)).toEqual(['GetPluginCapabilities', 'GetPluginInfo', 'Probe']);
    expect(methods(loadCsi().Node)).toContain('NodeGetInfo');
    expect(loadCsi().Node.service.NodeStageVolume.path).toBe('/csi.v1.Node/NodeStageVolume');
  });
});

describe('dialUnix', () => {
  let dir: string;
  let server: grpc.Server | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ndl-dial-'));
  });
  afterEach(async () => {
    if (server) await new Promise<void>((r) => server!.tryShutdown(() => r()));
    server = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('connects, and typed clients for two services share the channel; options apply (enums as strings, int64 as strings)', async () => {
    const sock = join(dir, 'csi.sock');
    const csi = loadCsi();
    server = new grpc.Server();
    const identity: Partial<IdentityHandlers> = {
      GetPluginInfo: (_c, cb) => cb(null, { name: 'hostpath.csi.k8s.io', vendor_version: 'v1' }),
    };
    const node: Partial<NodeHandlers> = {
      NodeGetInfo: (_c, cb) => cb(null, { node_id: 'n1', max_volumes_per_node: '9007199254740993' }),
      NodeGetCapabilities: (_c, cb) => cb(null, { capabilities: [{ rpc: { type: 'STAGE_UNSTAGE_VOLUME' } }] }),
    };
    server.addService(csi.Identity.service, identity as grpc.UntypedServiceImplementation); // only the methods under test
    server.addService(csi.Node.service, node as grpc.UntypedServiceImplementation);
    await new Promise<void>((ok, fail) => server!.bindAsync(unixTarget(sock), grpc.ServerCredentials.createInsecure(), (e) => (e ? fail(e) : ok())));

    const channel = await dialUnix(sock, 5_000);
    const id = clientOn(csi.Identity, channel);
    const nd = clientOn(csi.Node, channel);
    const info = await new Promise<unknown>((ok, fail) => id.GetPluginInfo({}, (e, r) => (e ? fail(e) : ok(r))));
    expect(info).toMatchObject({ name: 'hostpath.csi.k8s.io', vendor_version: 'v1' });
    const ni = await new Promise<unknown>((ok, fail) => nd.NodeGetInfo({}, (e, r) => (e ? fail(e) : ok(r))));
    expect(ni).toMatchObject({ node_id: 'n1', max_volumes_per_node: '9007199254740993' });
    const caps = await new Promise<{ capabilities: unknown[] }>((ok, fail) => nd.NodeGetCapabilities({}, (e, r) => (e || !r ? fail(e) : ok(r))));
    expect(caps.capabilities).toEqual([{ rpc: { type: 'STAGE_UNSTAGE_VOLUME' } }]); // static codecs: no virtual oneof field (`type: 'rpc'`)
    const unimplemented = await new Promise<unknown>((ok) => nd.NodeExpandVolume({}, (e) => ok(e)));
    expect(grpcErrorText(unimplemented)).toMatch(/^rpc error: code = Unimplemented desc = /);
    id.close();
  });

  it('gives up after the timeout with upstream wording', async () => {
    const missing = join(dir, 'nobody.sock');
    await expect(dialUnix(missing, 300)).rejects.toThrow(`failed to dial socket ${missing}, err: context deadline exceeded`);
  });

  it('stops dialling when aborted', async () => {
    const missing = join(dir, 'nobody.sock');
    const ac = new AbortController();
    const dialing = dialUnix(missing, 60_000, ac.signal);
    ac.abort();
    await expect(dialing).rejects.toThrow(`failed to dial socket ${missing}, err: context canceled`);
  });
});

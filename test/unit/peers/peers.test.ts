// The harness's plugin peers (test/peers) start, create their sockets and speak
// the upstream wire protocols to nodelet's own gRPC clients. Needs root (bind
// mounts, mount namespaces) and Go (a cold build of test/peers takes ~2 min).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadCsi } from '../../../sockets/csi.ts';
import { loadDevicePlugin, type RegisterRequest__Output } from '../../../sockets/deviceplugin.ts';
import { clientOn, dialUnix, unixTarget } from '../../../sockets/dial.ts';
import { CSI_PLUGIN, loadPluginRegistration } from '../../../sockets/pluginregistration.ts';
import { until } from '../../harness/until.ts';
import { buildPeers } from '../../peers/build-peers.ts';
import { HOSTPATH_DRIVER_NAME, HOSTPATH_TOPOLOGY_KEY, startHostpathPlugin, startNodeDriverRegistrar } from '../../peers/csi-hostpath.ts';
import { createCsiVolume, deleteCsiVolume } from '../../peers/csi-controller.ts';
import type { RunningPeer } from '../../peers/running-peer.ts';
import { SAMPLE_RESOURCE_NAME, startSampleDevicePlugin } from '../../peers/sample-device-plugin.ts';

const isRoot = process.getuid?.() === 0;

/** Calls a grpc-js unary method as a promise. */
function call<Req, Res>(client: grpc.Client, method: string, req: Req): Promise<Res> {
  const fn = (client as unknown as Record<string, (r: Req, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r?: Res) => void) => void>)[method]!;
  return new Promise((ok, fail) => fn.call(client, req, { deadline: Date.now() + 5_000 }, (e, r) => (e ? fail(e) : ok(r!))));
}

function exitOf(p: RunningPeer): Promise<number | null> {
  const proc = p.peer.proc;
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve(proc.exitCode);
  return new Promise((ok) => proc.once('exit', (code) => ok(code)));
}

describe.skipIf(!isRoot)('plugin peers (needs root: mounts)', () => {
  let dir: string;
  const peers: RunningPeer[] = [];
  const channels: grpc.Channel[] = [];

  beforeAll(() => {
    buildPeers();
  }, 900_000);
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ndl-peers-'));
    mkdirSync(join(dir, 'plugins_registry'));
    mkdirSync(join(dir, 'device-plugins'));
  });
  afterEach(async () => {
    for (const c of channels.splice(0)) c.close();
    await Promise.all(peers.splice(0).map((p) => p.stop()));
    await rm(dir, { recursive: true, force: true });
  });

  async function startCsi(): Promise<{ csiSock: string; regSock: string }> {
    const csiSock = join(dir, 'csi.sock');
    const drv = await startHostpathPlugin({ nodeId: 'node-a', stateDir: join(dir, 'state'), endpointSocket: csiSock });
    peers.push(drv);
    const reg = await startNodeDriverRegistrar({
      csiAddress: csiSock,
      kubeletRegistrationPath: '/var/lib/kubelet/plugins/hostpath/csi.sock',
      pluginRegistrationDir: join(dir, 'plugins_registry'),
    });
    peers.push(reg);
    return { csiSock, regSock: reg.registrationSocket };
  }

  it('registrar creates <driver>-reg.sock and answers GetInfo as a CSIPlugin', async () => {
    const { regSock } = await startCsi();
    expect(regSock).toBe(join(dir, 'plugins_registry', `${HOSTPATH_DRIVER_NAME}-reg.sock`));
    const channel = await dialUnix(regSock, 5_000);
    channels.push(channel);
    const info = await call<object, { type: string; name: string; endpoint: string; supported_versions: string[] }>(
      clientOn((await loadPluginRegistration()).Registration, channel),
      'GetInfo',
      {},
    );
    expect(info).toEqual({
      type: CSI_PLUGIN,
      name: HOSTPATH_DRIVER_NAME,
      endpoint: '/var/lib/kubelet/plugins/hostpath/csi.sock',
      supported_versions: ['1.0.0'],
    });
  });

  it('registrar exits 1 when told registered=false', async () => {
    const { regSock } = await startCsi();
    const reg = peers[1]!;
    const channel = await dialUnix(regSock, 5_000);
    channels.push(channel);
    const client = clientOn((await loadPluginRegistration()).Registration, channel);
    await call(client, 'NotifyRegistrationStatus', { plugin_registered: false, error: 'bad versions' }).catch(() => undefined);
    expect(await exitOf(reg)).toBe(1);
    expect(reg.log()).toContain('Registration process failed with error: bad versions');
  });

  it('hostpathplugin reports node info and bind-mounts an inline ephemeral volume', async () => {
    const { csiSock } = await startCsi();
    const channel = await dialUnix(csiSock, 5_000);
    channels.push(channel);
    const node = clientOn(loadCsi().Node, channel);
    const info = await call<object, { node_id: string; accessible_topology: { segments: Record<string, string> } }>(node, 'NodeGetInfo', {});
    expect(info.node_id).toBe('node-a');
    expect(info.accessible_topology.segments).toEqual({ [HOSTPATH_TOPOLOGY_KEY]: 'node-a' });

    const target = join(dir, 'pods', 'uid1', 'volumes', 'kubernetes.io~csi', 'vol', 'mount');
    await call(node, 'NodePublishVolume', {
      volume_id: 'csi-eph-1',
      target_path: target,
      volume_capability: { mount: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } },
      volume_context: { 'csi.storage.k8s.io/ephemeral': 'true' },
    });
    writeFileSync(join(target, 'hello'), 'from the pod');
    // Data in <statedir>/<volume id>, as upstream hostpath.
    expect(readFileSync(join(dir, 'state', 'csi-eph-1', 'hello'), 'utf8')).toBe('from the pod');

    await call(node, 'NodeUnpublishVolume', { volume_id: 'csi-eph-1', target_path: target });
    expect(existsSync(target)).toBe(false);
    expect(existsSync(join(dir, 'state', 'csi-eph-1'))).toBe(false);
  });

  it('hostpathplugin follows the upstream contract: CreateVolume makes <statedir>/<id>, unknown ids are NotFound, NodePublish before NodeStage is FailedPrecondition', async () => {
    const { csiSock } = await startCsi();
    const channel = await dialUnix(csiSock, 5_000);
    channels.push(channel);
    const node = clientOn(loadCsi().Node, channel);
    const capability = { mount: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } };
    const id = await createCsiVolume(csiSock, 'pv-1', 1024);
    expect(await createCsiVolume(csiSock, 'pv-1', 1024)).toBe(id);
    expect(existsSync(join(dir, 'state', id))).toBe(true);
    const staging = join(dir, 'staging');
    const target = join(dir, 'pods', 'uid2', 'volumes', 'kubernetes.io~csi', 'pv-1', 'mount');
    await expect(call(node, 'NodeStageVolume', { volume_id: 'nope', staging_target_path: staging, volume_capability: capability })).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
    });
    await expect(
      call(node, 'NodePublishVolume', { volume_id: id, staging_target_path: staging, target_path: target, volume_capability: capability }),
    ).rejects.toMatchObject({ code: grpc.status.FAILED_PRECONDITION });
    await call(node, 'NodeStageVolume', { volume_id: id, staging_target_path: staging, volume_capability: capability });
    await call(node, 'NodePublishVolume', { volume_id: id, staging_target_path: staging, target_path: target, volume_capability: capability });
    writeFileSync(join(target, 'kept'), 'x');
    await call(node, 'NodeUnpublishVolume', { volume_id: id, target_path: target });
    await call(node, 'NodeUnstageVolume', { volume_id: id, staging_target_path: staging });
    expect(readFileSync(join(dir, 'state', id, 'kept'), 'utf8')).toBe('x');
    await deleteCsiVolume(csiSock, id);
    expect(existsSync(join(dir, 'state', id))).toBe(false);
  });

  it('hostpathplugin refuses a volume id that is not one path element', async () => {
    const { csiSock } = await startCsi();
    const channel = await dialUnix(csiSock, 5_000);
    channels.push(channel);
    const node = clientOn(loadCsi().Node, channel);
    await expect(
      call(node, 'NodePublishVolume', {
        volume_id: '../escape',
        target_path: join(dir, 't'),
        volume_capability: { mount: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } },
        volume_context: { 'csi.storage.k8s.io/ephemeral': 'true' },
      }),
    ).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
  });

  it('sample-device-plugin registers on <device-plugins>/kubelet.sock from its mount namespace', async () => {
    const kubeletSock = join(dir, 'device-plugins', 'kubelet.sock');
    const requests: RegisterRequest__Output[] = [];
    const server = new grpc.Server();
    server.addService((await loadDevicePlugin()).Registration.service, {
      Register: (c: grpc.ServerUnaryCall<RegisterRequest__Output, object>, cb: grpc.sendUnaryData<object>) => {
        requests.push(c.request);
        cb(null, {});
      },
    });
    await new Promise<void>((ok, fail) => server.bindAsync(unixTarget(kubeletSock), grpc.ServerCredentials.createInsecure(), (e) => (e ? fail(e) : ok())));
    try {
      const dp = await startSampleDevicePlugin({ kubeletSocketDir: join(dir, 'device-plugins'), mode: 'kubelet-sock' });
      peers.push(dp);
      await until('a Register request', () => requests.length > 0, 15_000);
      expect(requests).toHaveLength(1);
      expect(requests[0]).toMatchObject({ version: 'v1beta1', resource_name: SAMPLE_RESOURCE_NAME, endpoint: dp.socketPath.split('/').pop() });
    } finally {
      server.forceShutdown();
    }
  });
});

// The CSIPlugin registration handler against a fake CSI Node service on a
// real unix socket and an in-memory Node/CSINode store.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CsiDriverRegistry } from '../../../core/volumes/csi/csi-driver-registry.ts';
import { csiPluginHandler } from '../../../core/volumes/csi/csi-plugin-handler.ts';
import { NodeInfoManager } from '../../../core/volumes/csi/node-info-manager.ts';
import { FakeNodeInfoApi } from './fake-node-info-api.ts';
import { startFakeCsiNode, type FakeCsiNode } from './fake-csi-node.ts';

const log = pino({ level: 'silent' });
const FAST = { steps: 2, initialMs: 1, factor: 2, jitter: 0 };
let dir: string;
let driver: FakeCsiNode;
let drivers: CsiDriverRegistry;
let api: FakeNodeInfoApi;
let registered: string[];

function handler() {
  return csiPluginHandler({ drivers, log, nodeInfo: new NodeInfoManager(api, 'n1', FAST), onRegistered: (d) => registered.push(d), timeoutMs: 2000 });
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ndl-csi-h-'));
  driver = await startFakeCsiNode(join(dir, 'csi.sock'));
  drivers = new CsiDriverRegistry();
  api = new FakeNodeInfoApi('n1');
  registered = [];
});

afterEach(async () => {
  drivers.close();
  await driver.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('csiPluginHandler', () => {
  it('registers: NodeGetInfo, then the Node and CSINode carry the driver', async () => {
    driver.nodeID = 'node-abc';
    driver.maxVolumes = 3;
    driver.topology = { 'topology.hostpath.csi/node': 'node-abc' };
    const h = handler();
    await h.validatePlugin('fake.csi', driver.socketPath, ['1.0.0']);
    await h.registerPlugin('fake.csi', driver.socketPath, ['1.0.0']);
    expect(driver.callsOf('NodeGetInfo')).toHaveLength(1);
    expect(drivers.get('fake.csi')?.endpoint).toBe(driver.socketPath);
    expect(String(drivers.get('fake.csi')?.highestSupportedVersion)).toBe('1.0.0');
    expect(api.csiNode?.spec?.drivers).toEqual([
      { name: 'fake.csi', nodeID: 'node-abc', topologyKeys: ['topology.hostpath.csi/node'], allocatable: { count: 3 } },
    ]);
    expect(api.nodeIDs()).toEqual({ 'fake.csi': 'node-abc' });
    expect(registered).toEqual(['fake.csi']);
  });

  it('rejects unsupported versions in validatePlugin with upstream wording', async () => {
    expect(() => handler().validatePlugin('fake.csi', driver.socketPath, ['0.3.0'])).toThrow(
      `validation failed for CSI Driver fake.csi at endpoint ${driver.socketPath}: kubernetes.io/csi: ValidatePlugin for CSI driver "fake.csi" failed. None of the versions specified ["0.3.0"] are supported. err=highest supported version reported is 0.3.0, must be v1.x`,
    );
  });

  it('forgets the driver and rethrows when NodeGetInfo fails', async () => {
    driver.failures.set('NodeGetInfo', { code: grpc.status.UNAVAILABLE, details: 'driver not ready' });
    await expect(handler().registerPlugin('fake.csi', driver.socketPath, ['1.0.0'])).rejects.toThrow('rpc error: code = Unavailable desc = driver not ready');
    expect(drivers.get('fake.csi')).toBeUndefined();
    expect(api.csiNode).toBeUndefined();
    expect(registered).toEqual([]);
  });

  it('forgets the driver when the Node update fails (topology collision)', async () => {
    api.node.metadata!.labels = { 'topology.hostpath.csi/node': 'someone-else' };
    driver.topology = { 'topology.hostpath.csi/node': 'me' };
    await expect(handler().registerPlugin('fake.csi', driver.socketPath, ['1.0.0'])).rejects.toThrow('detected topology value collision');
    expect(drivers.get('fake.csi')).toBeUndefined();
  });

  it('deregisters: CSINode entry and annotation removed; a stale endpoint is ignored', async () => {
    const h = handler();
    await h.registerPlugin('fake.csi', driver.socketPath, ['1.0.0']);
    await h.deRegisterPlugin('fake.csi', '/some/other.sock');
    expect(drivers.get('fake.csi')).toBeDefined();
    expect(api.csiNode?.spec?.drivers).toHaveLength(1);
    await h.deRegisterPlugin('fake.csi', driver.socketPath);
    expect(drivers.get('fake.csi')).toBeUndefined();
    expect(api.csiNode?.spec?.drivers).toEqual([]);
    expect(api.nodeIDs()).toBeUndefined();
  });

  it('refuses a second registration of the same name unless it advertises a higher version', async () => {
    const h = handler();
    await h.registerPlugin('fake.csi', driver.socketPath, ['1.0.0']);
    expect(() => h.validatePlugin('fake.csi', driver.socketPath, ['1.0.0'])).toThrow(
      'Another driver with the same name is already registered with a higher supported version: "1.0.0"',
    );
    await h.validatePlugin('fake.csi', driver.socketPath, ['1.2.0']);
  });

  it('waitFor resolves when a driver registers and times out otherwise', async () => {
    const late = drivers.waitFor('fake.csi', 5000);
    expect(await drivers.waitFor('other.csi', 10)).toBe(false);
    await handler().registerPlugin('fake.csi', driver.socketPath, ['1.0.0']);
    expect(await late).toBe(true);
  });
});

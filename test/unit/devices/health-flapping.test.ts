// Device plugin health flapping: 100 devices flipping health every 10 ms
// through a real gRPC ListAndWatch stream into the DeviceManager, whose changes poke
// the NodeController. Node writes stay bounded (one per poke interval plus the
// periodic one) and the last state is what the Node ends with.
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { V1Node } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { DeviceManager } from '../../../core/devices/device-manager.ts';
import type { KubeClients } from '../../../core/kube/client.ts';
import { NodeController } from '../../../core/node/node-controller.ts';
import type { NodeShape } from '../../../core/node/node-object.ts';
import { FakeDevicePlugin, type FakeDevice } from './fake-device-plugin.ts';
import { memLogger, tmp, until } from './helpers.ts';

const R = 'example.com/resource';
const root = mkdtempSync(join(tmpdir(), 'nodelet-flap-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const shape: NodeShape = {
  nodeName: 'node-a',
  nodeIP: '10.0.0.9',
  kubeletPort: 10250,
  maxPods: 110,
  labels: {},
  taints: [],
  defaultTaint: true,
  architecture: 'wasm32-wasi',
  os: 'wasi',
  kubeletVersion: 'v1.33.0',
  runtimeVersion: 'fake://1',
  contributions: [],
};

/** Counts Node writes the way the apiserver would see them. */
class CountingCore {
  writes: V1Node['status'][] = [];
  node: V1Node = { metadata: { name: 'node-a', uid: 'u1' } };
  async createNode({ body }: { body: V1Node }) {
    this.node = { ...body, metadata: { ...body.metadata, uid: 'u1' } };
    return this.node;
  }
  async patchNodeStatus({ body }: { body: { status: V1Node['status'] } }) {
    this.writes.push(JSON.parse(JSON.stringify(body.status)));
    this.node = { ...this.node, status: body.status };
    return this.node;
  }
}

describe('device health flapping', () => {
  it('100 devices flipping every 10 ms for 3 s cost a bounded number of Node writes; the final capacity is right', async () => {
    const dir = tmp();
    const devices = (flip: number): FakeDevice[] =>
      Array.from({ length: 100 }, (_, i) => ({ ID: `Dev-${i}`, health: flip % 2 === 0 ? 'Healthy' : 'Unhealthy' }));
    const plugin = new FakeDevicePlugin(join(dir, 'dp.sock'), { devices: devices(0) });
    await plugin.start();
    const m = new DeviceManager({ dir, log: memLogger(), dialTimeoutMs: 500, graceMs: 300_000, activePods: () => [] });
    await m.start();
    const core = new CountingCore();
    const node = new NodeController({ core } as unknown as KubeClients, {
      shape,
      rootDir: root,
      updateMs: 10_000,
      reportMs: 300_000,
      log: memLogger(),
      extraResources: () => m.capacity(),
    });
    try {
      await m.registerEndpoint(R, plugin.socketPath);
      await until('devices listed', () => m.capacity().capacity[R] === '100');
      await node.register();
      node.start();
      m.onChange(() => node.poke());
      const before = core.writes.length;
      const started = Date.now();
      let flips = 0;
      let changes = 0;
      m.onChange(() => changes++);
      await new Promise<void>((resolve) => {
        const t = setInterval(() => {
          // Every flip turns all 100 devices healthy, then all unhealthy: allocatable 100, 0, 100, ...
          plugin.update(devices(flips));
          if (++flips === 300) {
            clearInterval(t);
            resolve();
          }
        }, 10);
      });
      const last = devices(0);
      for (const i of [0, 1, 3]) last[i]!.health = 'Unhealthy';
      plugin.update(last);
      const healthy = String(last.filter((d) => d.health === 'Healthy').length);
      await until('final state written', () => core.writes.at(-1)?.allocatable?.[R] === healthy, 10_000);
      const writes = core.writes.length - before;
      const seconds = Math.ceil((Date.now() - started) / 1000);
      expect(changes).toBeGreaterThan(20); // the flapping did reach the node status source
      // The rate limit: at most one poke-triggered write per second of flapping and settling, plus the periodic one.
      expect(writes).toBeLessThanOrEqual(seconds + 2);
      expect(core.writes.at(-1)).toMatchObject({ capacity: { [R]: '100' }, allocatable: { [R]: healthy } });
    } finally {
      node.stop();
      m.stop();
      plugin.stop();
    }
  });
});

import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { clientOn, dialUnix } from '../../../sockets/dial.ts';
import { loadPodResources, type PodResourcesListerClient } from '../../../sockets/podresources.ts';
import { DeviceManager } from '../../../core/devices/device-manager.ts';
import { startPodResourcesServer } from '../../../core/devices/pod-resources-server.ts';
import { FakeDevicePlugin } from './fake-device-plugin.ts';
import { memLogger, pod, tmp, until } from './helpers.ts';

const R = 'example.com/resource';

function unary<T>(fn: (req: object, cb: (err: Error | null, res?: T) => void) => unknown, req: object): Promise<T> {
  return new Promise((resolve, reject) => fn(req, (err, res) => (err ? reject(err) : resolve(res!))));
}

describe('podresources v1 server', () => {
  const stops: Array<() => unknown> = [];
  afterEach(async () => {
    for (const s of stops.splice(0).reverse()) await s();
  });

  it('lists active pods with their device IDs, allocatable devices, and gets one pod', async () => {
    const dir = tmp();
    const log = memLogger();
    const active: V1Pod[] = [];
    const m = new DeviceManager({ dir, log, graceMs: 300_000, activePods: () => active });
    const plugin = new FakeDevicePlugin(join(dir, 'dp.sock'), {
      devices: [
        { ID: 'Dev-1', health: 'Healthy', numa: 0 },
        { ID: 'Dev-2', health: 'Healthy' },
      ],
    });
    await plugin.start();
    stops.push(
      () => plugin.stop(),
      () => m.stop(),
    );
    await m.registerEndpoint(R, plugin.socketPath);
    await until('devices', () => m.capacity().allocatable[R] === '2');
    const p1 = pod('p1', [{ [R]: '1' }, {}]);
    active.push(p1);
    expect((await m.allocate(p1)).admit).toBe(true);

    const server = await startPodResourcesServer(join(dir, 'pod-resources', 'kubelet.sock'), { activePods: () => active, devices: m }, log);
    stops.push(() => server.stop());
    const client: PodResourcesListerClient = clientOn((await loadPodResources()).PodResourcesLister, await dialUnix(server.socketPath, 2000));
    stops.push(() => client.close());

    const list = await unary<{ pod_resources: unknown[] }>(client.List.bind(client) as never, {});
    expect(list.pod_resources).toEqual([
      {
        name: 'p1',
        namespace: 'ns',
        containers: [
          {
            name: 'c0',
            devices: [{ resource_name: R, device_ids: ['Dev-1'], topology: { nodes: [{ ID: '0' }] } }],
            cpu_ids: [],
            memory: [],
            dynamic_resources: [],
          },
          { name: 'c1', devices: [], cpu_ids: [], memory: [], dynamic_resources: [] },
        ],
      },
    ]);
    const alloc = await unary<{ devices: Array<{ device_ids: string[] }> }>(client.GetAllocatableResources.bind(client) as never, {});
    expect(alloc.devices.map((d) => d.device_ids[0])).toEqual(['Dev-1', 'Dev-2']);
    const one = await unary<{ pod_resources: { name: string } }>(client.Get.bind(client) as never, { pod_name: 'p1', pod_namespace: 'ns' });
    expect(one.pod_resources.name).toBe('p1');
    await expect(unary(client.Get.bind(client) as never, { pod_name: 'nope', pod_namespace: 'ns' })).rejects.toThrow('pod nope in namespace ns not found');
  });

  it("List and Get report a container's prepared DRA claims as upstream's dynamic_resources (claim name/namespace, devices, CDI ids)", async () => {
    const dir = tmp();
    const log = memLogger();
    const p1 = pod('p1', [{}, {}]);
    const m = new DeviceManager({ dir, log, graceMs: 300_000, activePods: () => [p1] });
    stops.push(() => m.stop());
    const dynamicResources = (_p: V1Pod, c: { name: string }) =>
      c.name === 'c0'
        ? [
            {
              claimName: 'gpu-x',
              claimNamespace: 'ns',
              resources: [{ driverName: 'drv.io', poolName: 'node-a', deviceName: 'dev-0', cdiDevices: ['drv.io/t=a'] }],
            },
          ]
        : [];
    const server = await startPodResourcesServer(join(dir, 'pod-resources', 'kubelet.sock'), { activePods: () => [p1], devices: m, dynamicResources }, log);
    stops.push(() => server.stop());
    const client: PodResourcesListerClient = clientOn((await loadPodResources()).PodResourcesLister, await dialUnix(server.socketPath, 2000));
    stops.push(() => client.close());
    const want = [
      {
        claim_name: 'gpu-x',
        claim_namespace: 'ns',
        claim_resources: [expect.objectContaining({ driver_name: 'drv.io', pool_name: 'node-a', device_name: 'dev-0', cdi_devices: [{ name: 'drv.io/t=a' }] })],
      },
    ];
    type Pr = { containers: { name: string; dynamic_resources: unknown[] }[] };
    const list = await unary<{ pod_resources: Pr[] }>(client.List.bind(client) as never, {});
    expect(list.pod_resources[0]!.containers.map((c) => c.dynamic_resources)).toEqual([want, []]);
    const one = await unary<{ pod_resources: Pr }>(client.Get.bind(client) as never, { pod_name: 'p1', pod_namespace: 'ns' });
    expect(one.pod_resources.containers.map((c) => c.dynamic_resources)).toEqual([want, []]);
  });
});

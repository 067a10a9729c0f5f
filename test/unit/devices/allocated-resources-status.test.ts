// Device-plugin health in the pod status (ResourceHealthStatus): upstream devicemanager
// UpdateAllocatedResourcesStatus and the pod updates of genericDeviceUpdateCallback, through a
// real gRPC ListAndWatch stream of a fake plugin into the DeviceManager.
import { join } from 'node:path';
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { deviceStatusContributor } from '../../../core/devices/allocated-resources-status.ts';
import { DeviceManager } from '../../../core/devices/device-manager.ts';
import { FakeDevicePlugin } from './fake-device-plugin.ts';
import { memLogger, pod, tmp, until } from './helpers.ts';

const R = 'example.com/resource';
const R2 = 'example.com/other';

describe('allocatedResourcesStatus of device plugins', () => {
  const cleanup: Array<() => void> = [];
  afterEach(() => {
    for (const c of cleanup.splice(0)) c();
  });

  async function plugin(dir: string, name: string, ids: string[]) {
    const p = new FakeDevicePlugin(join(dir, `${name}.sock`), { devices: ids.map((ID) => ({ ID, health: 'Healthy' })) });
    await p.start();
    cleanup.push(() => p.stop());
    return p;
  }

  async function setup() {
    const dir = tmp();
    const active: V1Pod[] = [];
    const m = new DeviceManager({ dir, log: memLogger(), dialTimeoutMs: 500, graceMs: 300_000, activePods: () => active });
    await m.start();
    cleanup.push(() => m.stop());
    const p1 = await plugin(dir, 'dp1', ['Dev-1', 'Dev-2', 'Dev-3']);
    const p2 = await plugin(dir, 'dp2', ['gpu-0']);
    await m.registerEndpoint(R, p1.socketPath);
    await m.registerEndpoint(R2, p2.socketPath);
    await until('devices listed', () => m.capacity().capacity[R] === '3' && m.capacity().capacity[R2] === '1');
    const health: string[][] = [];
    m.onHealthChange((uids) => health.push(uids));
    return { m, p1, p2, active, health };
  }

  const statusOf = (p: V1Pod, extra: Partial<V1PodStatus> = {}): V1PodStatus => ({
    phase: 'Running',
    containerStatuses: (p.spec?.containers ?? []).map((c) => ({ name: c.name, image: 'x', imageID: '', ready: true, restartCount: 0 })),
    ...extra,
  });

  it('names each resource a container holds and lists its devices with their health; other containers and pods are left alone', async () => {
    const { m, active } = await setup();
    const a = pod('a', [{ [R]: '2', [R2]: '1' }, {}]);
    const b = pod('b', [{}]);
    active.push(a, b);
    expect(await m.allocate(a)).toEqual({ admit: true });
    const contributor = deviceStatusContributor(m);
    const s = contributor.contribute(a, statusOf(a));
    expect(s.containerStatuses![0]!.allocatedResourcesStatus).toEqual([
      { name: R2, resources: [{ resourceID: 'gpu-0', health: 'Healthy' }] },
      {
        name: R,
        resources: [
          { resourceID: 'Dev-1', health: 'Healthy' },
          { resourceID: 'Dev-2', health: 'Healthy' },
        ],
      },
    ]);
    expect(s.containerStatuses![1]!.allocatedResourcesStatus).toBeUndefined();
    const bs = statusOf(b);
    expect(contributor.contribute(b, bs)).toBe(bs);
  });

  it('a device turning Unhealthy names the pod holding it, once, and its entry says Unhealthy', async () => {
    const { m, p1, active, health } = await setup();
    const a = pod('a', [{ [R]: '1' }]);
    const b = pod('b', [{ [R]: '1' }]);
    for (const p of [a, b]) {
      active.push(p);
      expect(await m.allocate(p)).toEqual({ admit: true });
    }
    const contributor = deviceStatusContributor(m);
    p1.update([
      { ID: 'Dev-1', health: 'Healthy' },
      { ID: 'Dev-2', health: 'Unhealthy' },
      { ID: 'Dev-3', health: 'Unhealthy' },
    ]);
    await until('health change', () => health.length > 0);
    // Dev-2 is b's; Dev-3 is free, so it names no pod.
    expect(health).toEqual([[b.metadata!.uid!]]);
    expect(contributor.contribute(b, statusOf(b)).containerStatuses![0]!.allocatedResourcesStatus).toEqual([
      { name: R, resources: [{ resourceID: 'Dev-2', health: 'Unhealthy' }] },
    ]);
    expect(contributor.contribute(a, statusOf(a)).containerStatuses![0]!.allocatedResourcesStatus).toEqual([
      { name: R, resources: [{ resourceID: 'Dev-1', health: 'Healthy' }] },
    ]);
    // The same report again changes nothing.
    p1.update([
      { ID: 'Dev-1', health: 'Healthy' },
      { ID: 'Dev-2', health: 'Unhealthy' },
      { ID: 'Dev-3', health: 'Unhealthy' },
      { ID: 'Dev-4', health: 'Healthy' },
    ]);
    await until('Dev-4 listed', () => m.capacity().capacity[R] === '4');
    expect(health).toHaveLength(1);
  });

  it('a device missing from the report counts as Healthy; reported again, it names its pod', async () => {
    const { m, p1, active, health } = await setup();
    const a = pod('a', [{ [R]: '1' }]);
    active.push(a);
    expect(await m.allocate(a)).toEqual({ admit: true });
    const contributor = deviceStatusContributor(m);
    p1.update([
      { ID: 'Dev-2', health: 'Healthy' },
      { ID: 'Dev-3', health: 'Healthy' },
    ]);
    await until('Dev-1 gone', () => m.capacity().capacity[R] === '2');
    expect(contributor.contribute(a, statusOf(a)).containerStatuses![0]!.allocatedResourcesStatus).toEqual([
      { name: R, resources: [{ resourceID: 'Dev-1', health: 'Healthy' }] },
    ]);
    expect(health).toEqual([]);
    p1.update([
      { ID: 'Dev-1', health: 'Unhealthy' },
      { ID: 'Dev-2', health: 'Healthy' },
      { ID: 'Dev-3', health: 'Healthy' },
    ]);
    await until('Dev-1 back', () => health.length > 0);
    expect(health).toEqual([[a.metadata!.uid!]]);
  });

  it("replaces its own entry of the same name and keeps others' (DRA claims)", async () => {
    const { m, active } = await setup();
    const a = pod('a', [{ [R2]: '1' }]);
    active.push(a);
    expect(await m.allocate(a)).toEqual({ admit: true });
    const claim = { name: 'claim:gpu', resources: [{ resourceID: 'cdi/x', health: 'Unknown' }] };
    const stale = { name: R2, resources: [{ resourceID: 'gpu-0', health: 'Unhealthy' }] };
    const base = statusOf(a);
    const s = deviceStatusContributor(m).contribute(a, {
      ...base,
      containerStatuses: [{ ...base.containerStatuses![0]!, allocatedResourcesStatus: [claim, stale] }],
    });
    expect(s.containerStatuses![0]!.allocatedResourcesStatus).toEqual([claim, { name: R2, resources: [{ resourceID: 'gpu-0', health: 'Healthy' }] }]);
  });
});

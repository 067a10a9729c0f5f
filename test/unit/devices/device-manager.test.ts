import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { DeviceManager } from '../../../core/devices/device-manager.ts';
import { CHECKPOINT_FILE, decodeCheckpoint } from '../../../core/devices/checkpoint.ts';
import { FakeDevicePlugin, type FakePluginOptions } from './fake-device-plugin.ts';
import { memLogger, pod, tmp, until } from './helpers.ts';

const R = 'example.com/resource';
const two: FakePluginOptions['devices'] = [
  { ID: 'Dev-1', health: 'Healthy' },
  { ID: 'Dev-2', health: 'Healthy' },
];

describe('DeviceManager', () => {
  const cleanup: Array<() => void> = [];
  afterEach(() => {
    for (const c of cleanup.splice(0)) c();
  });

  async function setup(opts: Partial<FakePluginOptions> = {}, mgrOpts: { graceMs?: number; dir?: string; active?: () => V1Pod[] } = {}) {
    const dir = mgrOpts.dir ?? tmp();
    const plugin = new FakeDevicePlugin(join(dir, 'dp.sock'), { devices: two.map((d) => ({ ...d })), ...opts });
    await plugin.start();
    const active: V1Pod[] = [];
    const log = memLogger();
    const m = new DeviceManager({ dir, log, dialTimeoutMs: 500, graceMs: mgrOpts.graceMs ?? 300_000, activePods: mgrOpts.active ?? (() => active) });
    await m.start();
    cleanup.push(() => {
      m.stop();
      plugin.stop();
    });
    return { dir, plugin, m, active, log };
  }

  async function registered(opts: Partial<FakePluginOptions> = {}, mgrOpts: Parameters<typeof setup>[1] = {}) {
    const s = await setup(opts, mgrOpts);
    await s.m.registerEndpoint(R, s.plugin.socketPath);
    await until('devices listed', () => s.m.capacity().capacity[R] === '2');
    return s;
  }

  it('reports capacity = all devices and allocatable = healthy ones, and notifies changes', async () => {
    const { m, plugin } = await registered();
    let changes = 0;
    m.onChange(() => changes++);
    expect(m.capacity()).toEqual({ capacity: { [R]: '2' }, allocatable: { [R]: '2' } });
    plugin.update([
      { ID: 'Dev-1', health: 'Healthy' },
      { ID: 'Dev-2', health: 'Unhealthy' },
      { ID: 'Dev-3', health: 'Healthy' },
    ]);
    await until('update', () => m.capacity().capacity[R] === '3');
    expect(m.capacity().allocatable[R]).toBe('2');
    await until('change notified', () => changes > 0);
  });

  it('gives each container distinct free devices and rejects an unmet request with the upstream message', async () => {
    const { m, active, plugin } = await registered();
    const p1 = pod('p1', [{ [R]: '1' }]);
    const p2 = pod('p2', [{ [R]: '1' }]);
    const p3 = pod('p3', [{ [R]: '1' }]);
    expect(await m.allocate(p1)).toEqual({ admit: true });
    active.push(p1);
    expect(await m.allocate(p2)).toEqual({ admit: true });
    active.push(p2);
    const c1 = m.containerConfig(p1.metadata!.uid!, 'c0');
    const c2 = m.containerConfig(p2.metadata!.uid!, 'c0');
    expect(c1.envs.DEVICES).toBe('Dev-1');
    expect(c2.envs.DEVICES).toBe('Dev-2');
    expect(c1.mounts).toEqual([{ containerPath: '/dev-Dev-1', hostPath: '/tmp/Dev-1', readOnly: true }]);
    expect(await m.allocate(p3)).toEqual({
      admit: false,
      reason: 'UnexpectedAdmissionError',
      message: `Allocate failed due to requested number of devices unavailable for ${R}. Requested: 1, Available: 0, which is unexpected`,
    });
    expect(plugin.calls.allocate).toEqual([['Dev-1'], ['Dev-2']]);
    // p1 goes away: its device returns to the pool.
    active.splice(0, 1);
    expect(await m.allocate(p3)).toEqual({ admit: true });
    expect(m.containerConfig(p3.metadata!.uid!, 'c0').envs.DEVICES).toBe('Dev-1');
  });

  it('serialises concurrent admissions so no device is handed out twice', async () => {
    const { m, active, plugin } = await registered();
    const pods = [pod('a', [{ [R]: '1' }]), pod('b', [{ [R]: '1' }]), pod('c', [{ [R]: '1' }])];
    active.push(...pods);
    const results = await Promise.all(pods.map((p) => m.allocate(p)));
    expect(results.filter((r) => r.admit)).toHaveLength(2);
    expect(plugin.calls.allocate.flat().sort()).toEqual(['Dev-1', 'Dev-2']);
  });

  it('ignores pods without device-plugin resources and resources no plugin serves', async () => {
    const { m, plugin } = await registered();
    expect(await m.allocate(pod('plain', [{}]))).toEqual({ admit: true });
    expect(await m.allocate(pod('other', [{ 'other.io/gpu': '1' }]))).toEqual({ admit: true });
    expect(plugin.calls.allocate).toEqual([]);
  });

  it('asks GetPreferredAllocation when offered and calls PreStartContainer when required', async () => {
    const { m, plugin } = await registered({ preferred: (available) => [available[available.length - 1]!], preStartRequired: true });
    const p = pod('p', [{ [R]: '1' }]);
    expect(await m.allocate(p)).toEqual({ admit: true });
    expect(plugin.calls.preferred).toEqual([{ available: ['Dev-1', 'Dev-2'], mustInclude: [], size: 1 }]);
    expect(plugin.calls.allocate).toEqual([['Dev-2']]);
    expect(plugin.calls.preStart).toEqual([['Dev-2']]);
  });

  it('lets app containers reuse the devices of a finished init container', async () => {
    const { m, plugin } = await registered();
    const p = pod('p', [{ [R]: '1' }], [{ [R]: '2' }]);
    expect(await m.allocate(p)).toEqual({ admit: true });
    expect(plugin.calls.allocate).toEqual([['Dev-1', 'Dev-2'], ['Dev-1']]);
  });

  it('reports an Allocate failure and keeps nothing allocated', async () => {
    const { m, plugin } = await registered({ failAllocate: 'boom' });
    const r = await m.allocate(pod('p', [{ [R]: '2' }]));
    expect(r).toEqual({
      admit: false,
      reason: 'UnexpectedAdmissionError',
      message: 'Allocate failed due to rpc error: code = Internal desc = boom, which is unexpected',
    });
    plugin.o.failAllocate = undefined;
    expect(await m.allocate(pod('q', [{ [R]: '2' }]))).toEqual({ admit: true });
  });

  it('keeps capacity but no allocatable while a stopped plugin is in its grace period, then reports 0', async () => {
    const { m, plugin } = await registered({}, { graceMs: 300 });
    let changes = 0;
    m.onChange(() => changes++);
    plugin.stop();
    await until('allocatable 0', () => m.capacity().allocatable[R] === '0');
    expect(m.capacity().capacity[R]).toBe('2');
    const seen = changes;
    await until('grace expiry notified', () => changes > seen, 3000);
    expect(m.capacity()).toEqual({ capacity: { [R]: '0' }, allocatable: { [R]: '0' } });
    expect(await m.allocate(pod('p', [{ [R]: '1' }]))).toEqual({ admit: true }); // not a device-plugin resource any more
  });

  it('a second registration of the same resource replaces the first endpoint', async () => {
    const { m, plugin, dir } = await registered();
    const second = new FakeDevicePlugin(join(dir, 'dp2.sock'), { devices: [{ ID: 'X-1', health: 'Healthy' }] });
    await second.start();
    cleanup.push(() => second.stop());
    await m.registerEndpoint(R, second.socketPath);
    await until('new devices', () => m.capacity().capacity[R] === '1');
    plugin.stop(); // the old plugin going away does not affect the new endpoint
    await new Promise((r) => setTimeout(r, 100)); // a fixed wait: the old stream's end must change nothing
    expect(m.capacity()).toEqual({ capacity: { [R]: '1' }, allocatable: { [R]: '1' } });
    expect(m.resources()).toEqual([R]);
  });

  it('restores assignments from the checkpoint: pods keep their devices, nothing is handed out twice', async () => {
    const dir = tmp();
    const active: V1Pod[] = [];
    const first = await registered({}, { dir, active: () => active });
    const p1 = pod('p1', [{ [R]: '1' }]);
    expect(await first.m.allocate(p1)).toEqual({ admit: true });
    active.push(p1);
    const file = JSON.parse(readFileSync(join(dir, CHECKPOINT_FILE), 'utf8'));
    expect(file.Data.PodDeviceEntries).toEqual([
      expect.objectContaining({ PodUID: p1.metadata!.uid, ContainerName: 'c0', ResourceName: R, DeviceIDs: { '-1': ['Dev-1'] } }),
    ]);
    expect(file.Data.RegisteredDevices).toEqual({ [R]: ['Dev-1', 'Dev-2'] });
    first.m.stop();
    first.plugin.stop();
    rmSync(first.plugin.socketPath, { force: true });

    // "Restart": a new manager on the same dir, before the plugin re-registers.
    const log = memLogger();
    const m2 = new DeviceManager({ dir, log, graceMs: 300_000, activePods: () => active });
    await m2.start();
    cleanup.push(() => m2.stop());
    expect(m2.capacity()).toEqual({ capacity: { [R]: '0' }, allocatable: { [R]: '0' } });
    expect(m2.admissionAllocatable()).toEqual({ [R]: '1' });
    expect(await m2.allocate(p1)).toEqual({ admit: true }); // re-admission keeps its device without the plugin
    expect(m2.containerConfig(p1.metadata!.uid!, 'c0').envs.DEVICES).toBe('Dev-1');
    const plugin2 = new FakeDevicePlugin(join(dir, 'dp3.sock'), { devices: two.map((d) => ({ ...d })) });
    await plugin2.start();
    cleanup.push(() => plugin2.stop());
    await m2.registerEndpoint(R, plugin2.socketPath);
    await until('re-registered', () => m2.capacity().allocatable[R] === '2');
    const p2 = pod('p2', [{ [R]: '1' }]);
    expect(await m2.allocate(p2)).toEqual({ admit: true });
    expect(plugin2.calls.allocate).toEqual([['Dev-2']]);
  });

  it('ignores a corrupted checkpoint with an error line', async () => {
    const dir = tmp();
    const first = await registered({}, { dir });
    await first.m.allocate(pod('p', [{ [R]: '1' }]));
    const path = join(dir, CHECKPOINT_FILE);
    const text = readFileSync(path, 'utf8').replace('Dev-1', 'Dev-9');
    expect(() => decodeCheckpoint(text)).toThrow(/checkpoint is corrupted/);
    (await import('node:fs')).writeFileSync(path, text);
    const log = memLogger();
    const m2 = new DeviceManager({ dir, log, graceMs: 300_000 });
    await m2.start();
    expect(m2.capacity().capacity).toEqual({});
    expect(log.lines.some((l) => l.level === 'error' && String(l.msg).includes('failing to read checkpoint'))).toBe(true);
  });

  it('rejects a registration it cannot dial, keeping the previous endpoint', async () => {
    const { m, dir } = await registered();
    await expect(m.registerEndpoint(R, join(dir, 'missing.sock'))).rejects.toThrow(/failed to dial device plugin/);
    expect(m.capacity().allocatable[R]).toBe('2');
  });
});

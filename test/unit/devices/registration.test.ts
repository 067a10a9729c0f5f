import { existsSync, lstatSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DeviceManager } from '../../../core/devices/device-manager.ts';
import { createDevicePluginHandler, DEPRECATION_FILE } from '../../../core/devices/device-plugin-handler.ts';
import { RegistrationServer } from '../../../core/devices/registration-server.ts';
import { FakeDevicePlugin, registerWithKubelet } from './fake-device-plugin.ts';
import { memLogger, tmp, until } from './helpers.ts';

const R = 'example.com/resource';

describe('kubelet.sock Registration server', () => {
  const stops: Array<() => unknown> = [];
  afterEach(async () => {
    for (const s of stops.splice(0).reverse()) await s();
  });

  async function setup() {
    const dir = tmp();
    const log = memLogger();
    const m = new DeviceManager({ dir, log, dialTimeoutMs: 500, graceMs: 300_000 });
    const server = new RegistrationServer(dir, m, log);
    stops.push(
      () => m.stop(),
      () => server.stop(),
    );
    return { dir, m, server, log };
  }

  it('removes stale sockets (not other files) at start and serves kubelet.sock', async () => {
    const { dir, server } = await setup();
    const stale = createServer().listen(join(dir, 'old.sock'));
    await new Promise((r) => stale.once('listening', r));
    stops.push(() => stale.close());
    expect(lstatSync(join(dir, 'old.sock')).isSocket()).toBe(true);
    const keep = join(dir, 'kubelet_internal_checkpoint');
    writeFileSync(keep, '{}');
    const s2 = createServer().listen(join(dir, 'kubelet.sock'));
    await new Promise((r) => s2.once('listening', r));
    stops.push(() => s2.close());
    await server.start();
    expect(existsSync(join(dir, 'old.sock'))).toBe(false);
    expect(existsSync(keep)).toBe(true);
    expect(lstatSync(server.socketPath).isSocket()).toBe(true);
  });

  it('registers a plugin: capacity and allocatable appear', async () => {
    const { dir, m, server } = await setup();
    await server.start();
    const plugin = new FakeDevicePlugin(join(dir, 'dp.1'), {
      devices: [
        { ID: 'a', health: 'Healthy' },
        { ID: 'b', health: 'Unhealthy' },
      ],
    });
    await plugin.start();
    stops.push(() => plugin.stop());
    expect(await registerWithKubelet(server.socketPath, { endpoint: 'dp.1', resource_name: R })).toBe('');
    await until('devices', () => m.capacity().capacity[R] === '2');
    expect(m.capacity().allocatable[R]).toBe('1');
  });

  it('rejects bad requests with upstream messages', async () => {
    const { server } = await setup();
    await server.start();
    expect(await registerWithKubelet(server.socketPath, { version: 'v1alpha', endpoint: 'dp.1', resource_name: R })).toBe(
      'requested API version "v1alpha" is not supported by kubelet. Supported version is ["v1beta1"]',
    );
    expect(await registerWithKubelet(server.socketPath, { endpoint: 'dp.1', resource_name: 'kubernetes.io/gpu' })).toBe(
      'the ResourceName "kubernetes.io/gpu" is invalid',
    );
    expect(await registerWithKubelet(server.socketPath, { endpoint: '../escape.sock', resource_name: R })).toMatch(/must name a socket inside/);
    expect(await registerWithKubelet(server.socketPath, { endpoint: 'nothing-here', resource_name: R })).toMatch(
      /^failed to dial device plugin: failed to dial socket .*nothing-here/,
    );
  });
});

describe('DevicePlugin handler (plugins_registry)', () => {
  it('writes the DEPRECATION marker and validates like upstream', async () => {
    const dir = tmp();
    const log = memLogger();
    const m = new DeviceManager({ dir, log, graceMs: 300_000 });
    const h = createDevicePluginHandler(m, dir, log);
    expect(existsSync(join(dir, DEPRECATION_FILE))).toBe(true);
    expect(() => h.validatePlugin(R, '/x', ['v1alpha1', 'v2'])).toThrow('manager version, v1beta1, is not among plugin supported versions [v1alpha1 v2]');
    expect(() => h.validatePlugin('gpu', '/x', ['v1beta1'])).toThrow('invalid name of device plugin socket: the ResourceName "gpu" is invalid');
    expect(() => h.validatePlugin(R, '/x', ['v1beta1'])).not.toThrow();
  });

  it('registers through the endpoint socket and deregisters into the grace period', async () => {
    const dir = tmp();
    const log = memLogger();
    const m = new DeviceManager({ dir, log, graceMs: 300_000 });
    const plugin = new FakeDevicePlugin(join(dir, 'dp.sock'), { devices: [{ ID: 'a', health: 'Healthy' }] });
    await plugin.start();
    try {
      const h = createDevicePluginHandler(m, dir, log);
      await h.registerPlugin(R, plugin.socketPath, ['v1beta1']);
      await until('devices', () => m.capacity().allocatable[R] === '1');
      await h.deRegisterPlugin('example.com/other', plugin.socketPath); // another resource: no effect
      expect(m.capacity().allocatable[R]).toBe('1');
      await h.deRegisterPlugin(R, plugin.socketPath);
      expect(m.capacity()).toEqual({ capacity: { [R]: '1' }, allocatable: { [R]: '0' } });
    } finally {
      m.stop();
      plugin.stop();
    }
  });
});

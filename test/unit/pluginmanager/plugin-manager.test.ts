// The plugin manager against tiny fake plugins serving pluginregistration v1
// on real unix sockets in a temp directory.
import { mkdtemp, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { validateCsiPlugin } from '../../../core/pluginmanager/csi-versions.ts';
import { PluginManager, type PluginHandler } from '../../../core/pluginmanager/plugin-handler.ts';
import { startFakePlugin, type FakeRegistrationServer } from './fake-registration-server.ts';

const log = pino({ level: 'silent' });
const WAIT = { timeout: 10_000, interval: 20 };

/** A handler that records calls; `failRegister` makes registerPlugin throw. */
class RecordingHandler implements PluginHandler {
  calls: string[] = [];
  endpoints: string[] = [];
  failRegister: string | undefined;
  validate: (name: string, endpoint: string, versions: readonly string[]) => void = () => {};
  validatePlugin(name: string, endpoint: string, versions: readonly string[]): void {
    this.calls.push(`validate ${name}`);
    this.validate(name, endpoint, versions);
  }
  async registerPlugin(name: string, endpoint: string): Promise<void> {
    this.calls.push(`register ${name}`);
    this.endpoints.push(endpoint);
    if (this.failRegister) throw new Error(this.failRegister);
  }
  deRegisterPlugin(name: string): void {
    this.calls.push(`deregister ${name}`);
  }
}

let root: string;
let dir: string;
let manager: PluginManager | undefined;
let fakes: FakeRegistrationServer[];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'ndl-pm-'));
  dir = join(root, 'plugins_registry');
  fakes = [];
});

afterEach(async () => {
  await manager?.stop();
  manager = undefined;
  await Promise.all(fakes.map((f) => f.stop()));
  await rm(root, { recursive: true, force: true });
});

async function fake(name: string, info: Parameters<typeof startFakePlugin>[1]): Promise<FakeRegistrationServer> {
  const f = await startFakePlugin(join(dir, name), info);
  fakes.push(f);
  return f;
}

async function startManager(handlers: Record<string, PluginHandler>): Promise<PluginManager> {
  manager = new PluginManager({ dir, log, resyncPeriodMs: 50 });
  for (const [type, h] of Object.entries(handlers)) manager.addHandler(type, h);
  await manager.start();
  return manager;
}

describe('PluginManager', () => {
  it('creates a missing plugins directory without group-write or world access', async () => {
    await startManager({});
    const s = await stat(dir);
    expect(s.isDirectory()).toBe(true);
    expect(s.mode & 0o027).toBe(0);
  });

  it('registers a plugin: GetInfo → validate → register → NotifyRegistrationStatus(true); empty endpoint means the socket', async () => {
    const csi = new RecordingHandler();
    const pm = await startManager({ CSIPlugin: csi });
    const plugin = await fake('a-reg.sock', { type: 'CSIPlugin', name: 'a.csi.test', versions: ['1.0.0'] });
    await vi.waitFor(() => expect(plugin.statuses).toEqual([{ plugin_registered: true, error: '' }]), WAIT);
    expect(csi.calls).toEqual(['validate a.csi.test', 'register a.csi.test']);
    expect(csi.endpoints).toEqual([plugin.socketPath]);
    expect(pm.registeredPlugins().map((p) => [p.type, p.name, p.endpoint])).toEqual([['CSIPlugin', 'a.csi.test', plugin.socketPath]]);
  });

  it('passes a non-empty endpoint through unchanged', async () => {
    const dp = new RecordingHandler();
    await startManager({ DevicePlugin: dp });
    const plugin = await fake('dp.sock', { type: 'DevicePlugin', name: 'example.com/dev', endpoint: '/elsewhere/dp.sock', versions: ['v1beta1'] });
    await vi.waitFor(() => expect(plugin.statuses.at(-1)?.plugin_registered).toBe(true), WAIT);
    expect(dp.endpoints).toEqual(['/elsewhere/dp.sock']);
  });

  it('registers sockets that exist before start', async () => {
    await mkdir(dir, { recursive: true });
    const plugin = await fake('early.sock', { type: 'CSIPlugin', name: 'early', versions: ['1.0.0'] });
    const csi = new RecordingHandler();
    await startManager({ CSIPlugin: csi });
    await vi.waitFor(() => expect(plugin.statuses).toEqual([{ plugin_registered: true, error: '' }]), WAIT);
  });

  it('rejects an unknown plugin type with the upstream reason, and retries later', async () => {
    await startManager({ CSIPlugin: new RecordingHandler() });
    const plugin = await fake('odd.sock', { type: 'FooPlugin', name: 'odd', versions: ['1.0'] });
    const reason = `RegisterPlugin error -- no handler registered for plugin type: FooPlugin at socket ${plugin.socketPath}`;
    await vi.waitFor(() => expect(plugin.statuses[0]).toEqual({ plugin_registered: false, error: reason }), WAIT);
    // retried after the back-off, still rejected, never registered
    await vi.waitFor(() => expect(plugin.statuses.length).toBeGreaterThanOrEqual(2), WAIT);
    expect(plugin.statuses.every((s) => !s.plugin_registered && s.error === reason)).toBe(true);
    expect(manager!.registeredPlugins()).toEqual([]);
  });

  it('rejects a CSI driver offering only unsupported versions, with the upstream chain of reasons', async () => {
    const csi = new RecordingHandler();
    csi.validate = (name, endpoint, versions) => void validateCsiPlugin(name, endpoint, versions);
    await startManager({ CSIPlugin: csi });
    const plugin = await fake('v2.sock', { type: 'CSIPlugin', name: 'v2.csi', versions: ['2.0.0'] });
    await vi.waitFor(() => expect(plugin.statuses.length).toBeGreaterThan(0), WAIT);
    expect(plugin.statuses[0]).toEqual({
      plugin_registered: false,
      error:
        `RegisterPlugin error -- plugin validation failed with err: validation failed for CSI Driver v2.csi at endpoint ${plugin.socketPath}: ` +
        'kubernetes.io/csi: ValidatePlugin for CSI driver "v2.csi" failed. None of the versions specified ["2.0.0"] are supported. ' +
        'err=could not find a highest supported version from versions ([2.0.0]) reported: <nil>',
    });
    expect(csi.calls).not.toContain('register v2.csi');
  });

  it('tells the plugin when its handler fails to register it, and does not keep it', async () => {
    const csi = new RecordingHandler();
    csi.failRegister = 'NodeGetInfo failed';
    await startManager({ CSIPlugin: csi });
    const plugin = await fake('bad.sock', { type: 'CSIPlugin', name: 'bad', versions: ['1.0.0'] });
    await vi.waitFor(() => expect(plugin.statuses.length).toBeGreaterThan(0), WAIT);
    expect(plugin.statuses[0]).toEqual({
      plugin_registered: false,
      error: 'RegisterPlugin error -- plugin registration failed with err: NodeGetInfo failed',
    });
    expect(manager!.registeredPlugins()).toEqual([]);
  });

  it('deregisters a plugin whose socket is removed', async () => {
    const csi = new RecordingHandler();
    const pm = await startManager({ CSIPlugin: csi });
    const plugin = await fake('gone.sock', { type: 'CSIPlugin', name: 'gone', versions: ['1.0.0'] });
    await vi.waitFor(() => expect(pm.registeredPlugins()).toHaveLength(1), WAIT);
    await plugin.stop();
    await vi.waitFor(() => expect(csi.calls).toContain('deregister gone'), WAIT);
    expect(pm.registeredPlugins()).toEqual([]);
  });

  it('re-registers a re-created socket: the old plugin is deregistered first', async () => {
    const csi = new RecordingHandler();
    await startManager({ CSIPlugin: csi });
    const first = await fake('same.sock', { type: 'CSIPlugin', name: 'old', versions: ['1.0.0'] });
    await vi.waitFor(() => expect(first.statuses.at(-1)?.plugin_registered).toBe(true), WAIT);
    await first.stop();
    const second = await fake('same.sock', { type: 'CSIPlugin', name: 'new', versions: ['1.1.0'] });
    await vi.waitFor(() => expect(second.statuses.at(-1)?.plugin_registered).toBe(true), WAIT);
    expect(csi.calls).toEqual(['validate old', 'register old', 'deregister old', 'validate new', 'register new']);
    expect(manager!.registeredPlugins().map((p) => p.name)).toEqual(['new']);
  });

  it('ignores dotfiles and files that are not sockets', async () => {
    await mkdir(dir, { recursive: true });
    const hiddenEarly = await fake('.early-hidden.sock', { type: 'CSIPlugin', name: 'hidden1', versions: ['1.0.0'] });
    await writeFile(join(dir, 'not-a-socket'), 'x');
    const csi = new RecordingHandler();
    const pm = await startManager({ CSIPlugin: csi });
    const hiddenLate = await fake('.late-hidden.sock', { type: 'CSIPlugin', name: 'hidden2', versions: ['1.0.0'] });
    await writeFile(join(dir, 'plain-late'), 'x');
    // A visible plugin created last: once it is registered, the watcher and
    // reconciler have seen everything created before it.
    const visible = await fake('visible.sock', { type: 'CSIPlugin', name: 'visible', versions: ['1.0.0'] });
    await vi.waitFor(() => expect(visible.statuses.at(-1)?.plugin_registered).toBe(true), WAIT);
    expect(hiddenEarly.getInfoCalls + hiddenLate.getInfoCalls).toBe(0);
    expect(pm.registeredPlugins().map((p) => p.socketPath)).toEqual([visible.socketPath]);
    expect(csi.calls).toEqual(['validate visible', 'register visible']);
  });
});

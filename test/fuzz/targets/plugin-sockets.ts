/**
 * Plugin sockets: things dropped into `plugins_registry/` (sockets that never
 * answer or answer garbage, files that are not sockets, symlinks out, plugins
 * whose GetInfo lies: unknown types, names with path separators, endpoints
 * outside the directory, no versions), and device plugins registering on
 * `device-plugins/kubelet.sock` with bad versions, names and endpoints, or
 * flooding and flapping devices. Each must end in a registration status, a
 * Register error, or a log line naming the socket.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { FakeDevicePlugin, registerWithKubelet, type FakeDevice } from '../../unit/devices/fake-device-plugin.ts';
import { startFakePlugin, type FakeRegistrationServer } from '../../unit/pluginmanager/fake-registration-server.ts';
import { ESCAPE_MARKER, type FuzzEnvironment } from '../environment.ts';
import type { Outcome } from '../outcome.ts';
import type { Rng } from '../rng.ts';

/** A started input: how to classify it and how to clean up. */
interface Running {
  input: string;
  socketName: string;
  classify(log: string): string | undefined;
  stop(): Promise<void>;
}

const TYPES = ['CSIPlugin', 'DevicePlugin', 'DRAPlugin', 'Garbage', ''];
const NAMES = (id: string) => [`fz-${id}.example.com`, `a/${id}`, `../${id}`, '', `${id}-${'x'.repeat(3000)}`, `${id}\u0000nul`];
const ENDPOINTS = (id: string) => ['', `../../../tmp/${ESCAPE_MARKER}-${id}.sock`, '/nonexistent/x.sock', 'relative.sock'];
const VERSIONS = [[], ['v9'], ['1.0.0'], ['v1.DRAPlugin'], ['v1beta1', 'v1.0.0']];

const logNames = (name: string) => (log: string) => log.split('\n').find((l) => l.includes(name));

function rawServer(path: string, onConn: (s: import('node:net').Socket) => void): Promise<Server> {
  const srv = createServer(onConn);
  return new Promise((done, fail) => srv.listen(path, () => done(srv)).on('error', fail));
}

async function startInput(env: FuzzEnvironment, r: Rng, id: string): Promise<Running> {
  const reg = join(env.rootDir, 'plugins_registry');
  const dp = join(env.rootDir, 'device-plugins');
  mkdirSync(reg, { recursive: true });
  const sock = `fz-${id}.sock`;
  const path = join(reg, sock);
  const kind = r.int(0, 9);
  switch (kind) {
    case 0: {
      const srv = await rawServer(path, () => undefined);
      return {
        input: `never-answering socket ${sock}`,
        socketName: sock,
        classify: (l) => logNames(sock)(l) && 'log line',
        stop: async () => void srv.close(),
      };
    }
    case 1: {
      const srv = await rawServer(path, (s) => s.end(r.bytes(64)));
      return {
        input: `garbage-writing socket ${sock}`,
        socketName: sock,
        classify: (l) => logNames(sock)(l) && 'log line',
        stop: async () => void srv.close(),
      };
    }
    case 2: {
      const what = r.pick(['file', 'dir', 'fifo', 'symlink-out']);
      if (what === 'file') writeFileSync(path, 'not a socket');
      else if (what === 'dir') mkdirSync(path);
      else if (what === 'fifo') execFileSync('mkfifo', [path]);
      else symlinkSync(join(env.canaryDir, 'secret.txt'), path);
      // Upstream's watcher ignores what is not a socket; nodelet must neither register nor stall on it.
      return {
        input: `${what} named ${sock}`,
        socketName: sock,
        classify: (l) => (logNames(sock)(l) ? 'log line' : 'ignored (not a socket)'),
        stop: async () => undefined,
      };
    }
    case 3:
    case 4:
    case 5: {
      const info = { type: r.pick(TYPES), name: r.pick(NAMES(id)), endpoint: r.pick(ENDPOINTS(id)), versions: r.pick(VERSIONS) };
      const fake: FakeRegistrationServer = await startFakePlugin(path, info);
      return {
        input: `GetInfo ${JSON.stringify({ ...info, name: info.name.slice(0, 40) })}`,
        socketName: sock,
        classify: (l) => {
          const s = fake.statuses[0];
          if (s) return s.plugin_registered ? 'registered' : `refused: ${s.error.slice(0, 80)}`;
          return logNames(sock)(l) && 'log line';
        },
        stop: () => fake.stop(),
      };
    }
    case 6:
    case 7: {
      const req = {
        version: r.pick(['v1beta1', 'v1beta1', 'v9', '']),
        resource_name: r.pick([`fz.example.com/${id}`, 'noslash', 'a/b/c', `fz.example.com/${'x'.repeat(300)}`, '../x/y', '']),
        endpoint: r.pick([`dp-${id}.sock`, `../../../tmp/${ESCAPE_MARKER}-${id}.sock`, '', `/abs/${id}.sock`]),
      };
      const err = await registerWithKubelet(join(dp, 'kubelet.sock'), req).catch((e: Error) => `dial: ${e.message}`);
      return {
        input: `device Register ${JSON.stringify(req).slice(0, 120)}`,
        socketName: req.endpoint,
        classify: () => (err ? `Register error: ${err.slice(0, 80)}` : 'Register accepted'),
        stop: async () => undefined,
      };
    }
    default: {
      const n = r.pick([0, 1, 5000]);
      const bad = r.chance(0.5);
      const devices: FakeDevice[] = Array.from({ length: n }, (_, i) => ({
        ID: bad ? r.pick(['', 'a/b', '../x', `d${i % 3}`]) : `d${i}`,
        health: r.chance(0.5) ? 'Healthy' : 'Unhealthy',
      }));
      const ep = `dp-${id}.sock`;
      const plugin = new FakeDevicePlugin(join(dp, ep), { devices });
      await plugin.start();
      const err = await registerWithKubelet(join(dp, 'kubelet.sock'), { endpoint: ep, resource_name: `fz.example.com/${id}` }).catch(
        (e: Error) => `dial: ${e.message}`,
      );
      const flap = setInterval(() => plugin.update(devices.map((d) => ({ ...d, health: r.chance(0.5) ? 'Healthy' : 'Unhealthy' }))), 50);
      return {
        input: `device plugin with ${n} ${bad ? 'hostile-ID' : ''} devices, flapping every 50 ms`,
        socketName: ep,
        classify: () => (err ? `Register error: ${err.slice(0, 80)}` : plugin.calls.listAndWatch ? 'registered, ListAndWatch open' : undefined),
        stop: async () => (clearInterval(flap), plugin.stop()),
      };
    }
  }
}

/** Runs `count` plugin inputs, 10 at a time. */
export async function fuzzPluginSockets(env: FuzzEnvironment, rng: Rng, count: number, record: (o: Outcome) => void): Promise<void> {
  for (let i = 0; i < count && env.alive(); i += 10) {
    const from = env.logSize();
    const running: Running[] = [];
    for (let j = i; j < Math.min(count, i + 10); j++) {
      const id = `pl${rng.seed % 1000}-${j}`;
      try {
        running.push(await startInput(env, rng, id));
      } catch (e) {
        record({ target: 'plugin-sockets', input: id, verdict: 'classified', detail: `not started: ${(e as Error).message.slice(0, 80)}` });
      }
    }
    const verdicts = new Map<Running, string>();
    const deadline = Date.now() + 25_000;
    while (verdicts.size < running.length && Date.now() < deadline && env.alive()) {
      await new Promise((r) => setTimeout(r, 500)); // the poll's interval: an input without a verdict at the deadline is a finding
      const log = env.logFrom(from);
      for (const x of running)
        if (!verdicts.has(x)) {
          const v = x.classify(log);
          if (v && !v.startsWith('ignored')) verdicts.set(x, v);
        }
    }
    const log = env.logFrom(from);
    const healthy = await env.healthz();
    for (const x of running) {
      const v = verdicts.get(x) ?? x.classify(log);
      if (!env.alive() || !healthy)
        record({ target: 'plugin-sockets', input: x.input, verdict: 'crash', detail: env.alive() ? '/healthz did not answer' : env.exitDescription() });
      else
        record({
          target: 'plugin-sockets',
          input: x.input,
          verdict: v ? 'classified' : 'unclassified',
          detail: v ?? 'no status, error or log line naming it in 25 s',
        });
      await x.stop().catch(() => undefined);
    }
  }
}

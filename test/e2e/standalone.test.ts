/**
 * `npm start`: standalone mode with no cluster runs the bundled static pod
 * (a hello-world Wasm module shipped in the repo) to completion, its logs are
 * readable through the kubelet API with the local client certificate, and an
 * anonymous caller is refused. On nodelet's default (the external WASI
 * runtime), the runtime outlives nodelet and a static pod's running container
 * is re-adopted by the next nodelet.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from './support/kube.ts';
import { buildWasmModule } from '../harness/wasm-modules.ts';
import { freeListenPort } from '../harness/ports.ts';
import { killWasiRuntime, trackWasiRuntime, wasiRuntimePid } from '../harness/wasi-runtimes.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');

function get(port: number, path: string, tls: { ca?: Buffer; cert?: Buffer; key?: Buffer }): Promise<{ status: number; body: string }> {
  return new Promise((res, rej) => {
    const req = request({ host: '127.0.0.1', port, path, ...tls, rejectUnauthorized: !!tls.ca }, (r) => {
      let body = '';
      r.on('data', (c) => (body += c));
      r.on('end', () => res({ status: r.statusCode ?? 0, body }));
    });
    req.on('error', rej);
    req.end();
  });
}

/** A root dir for a standalone nodelet: its WASI runtime (nodelet's default) is killed and the dir removed after the tests. */
function standaloneRoot(prefix: string): string {
  const rootDir = mkdtempSync(join(tmpdir(), prefix));
  trackWasiRuntime(rootDir);
  afterAll(async () => {
    await killWasiRuntime(rootDir);
    rmSync(rootDir, { recursive: true, force: true });
  });
  return rootDir;
}

describe('npm start (standalone mode)', () => {
  const rootDir = standaloneRoot('nodelet-standalone-');

  it('runs the bundled static pod to completion without a cluster and exits 0 on SIGTERM', async () => {
    const p = spawn('npm', ['start', '--', `--root-dir=${rootDir}`, '--port=0', '--healthz-port=0', '--hostname-override=standalone'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    p.stdout.on('data', (c) => (out += c));
    p.stderr.on('data', (c) => (out += c));
    const exited = new Promise<number | null>((r) => p.on('exit', (code) => r(code)));
    try {
      await eventually('the static pod Succeeded', async () => out.includes('pod default/hello-wasi-standalone is Succeeded'), 60_000);
      const port = Number(/"kubelet API listening"/.test(out) && /"port":(\d+),"healthzPort"/.exec(out)?.[1]);
      const podDir = readdirSync(join(rootDir, 'logs', 'pods')).find((d) => d.startsWith('default_hello-wasi-standalone_'))!;
      const log = readFileSync(join(rootDir, 'logs', 'pods', podDir, 'hello', '0.log'), 'utf8');
      expect(log).toMatch(/^\S+Z stdout F Hello from WebAssembly on nodelet!$/m);
      expect(log).toContain('stdout F done');
      const pki = join(rootDir, 'pki');
      const tls = {
        ca: readFileSync(join(pki, 'kubelet.crt')),
        cert: readFileSync(join(pki, 'local-client.crt')),
        key: readFileSync(join(pki, 'local-client.key')),
      };
      const logs = await get(port, '/containerLogs/default/hello-wasi-standalone/hello?tailLines=1', tls);
      expect(logs).toEqual({ status: 200, body: 'done\n' });
      expect((await get(port, '/pods', {})).status).toBe(401);
    } finally {
      // SIGTERM to nodelet itself (its pid is on every log line); npm then exits with nodelet's code.
      const pid = Number(/"pid":(\d+)/.exec(out)?.[1]);
      if (pid) process.kill(pid, 'SIGTERM');
      else process.kill(-p.pid!, 'SIGKILL');
    }
    expect(await exited).toBe(0);
    expect(out).toContain('"msg":"stopped"');
    // nodelet's default: the bundled pod ran in the external WASI runtime, which outlives nodelet.
    expect(out).toContain('started the wasi runtime process');
    const runtime = wasiRuntimePid(rootDir);
    expect(runtime).toBeDefined();
    expect(() => process.kill(runtime!, 0)).not.toThrow();
  });
});

describe('a SIGTERM while nodelet is still starting', () => {
  const rootDir = standaloneRoot('nodelet-early-term-');

  it('stops it cleanly (exit 0, "stopped"), not by the signal default action', async () => {
    const args = [join(ROOT, 'bin', 'nodelet.mjs'), `--root-dir=${rootDir}`, '--port=0', '--healthz-port=0', '--hostname-override=early-term'];
    const p = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let signalled = false;
    const onData = (c: Buffer) => {
      out += c;
      const pid = Number(/"pid":(\d+)/.exec(out)?.[1]);
      // The first log line ("starting nodelet") comes before the agent has started anything.
      if (!signalled && pid && out.includes('starting nodelet')) {
        signalled = true;
        process.kill(pid, 'SIGTERM');
      }
    };
    p.stdout.on('data', onData);
    p.stderr.on('data', onData);
    const exited = await new Promise<{ code: number | null; signal: string | null }>((r) => p.on('exit', (code, signal) => r({ code, signal })));
    expect(signalled).toBe(true);
    expect(exited, out).toEqual({ code: 0, signal: null });
    expect(out).toContain('"msg":"stopped"');
  });
});

describe('a start that fails', () => {
  const rootDir = standaloneRoot('nodelet-failed-start-');

  it('ends the process with status 1, not one kept alive by what the start had opened', async () => {
    // One port for both servers: the kubelet API listens, then the healthz server cannot.
    const port = await freeListenPort();
    const args = [join(ROOT, 'bin', 'nodelet.mjs'), `--root-dir=${rootDir}`, `--port=${port}`, `--healthz-port=${port}`, '--hostname-override=failed-start'];
    const p = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (c) => (out += c));
    p.stderr.on('data', (c) => (out += c));
    const exited = new Promise<number | null>((r) => p.on('exit', (code) => r(code)));
    const timer = setTimeout(() => p.kill('SIGKILL'), 30_000);
    try {
      expect(await exited, out).toBe(1);
    } finally {
      clearTimeout(timer);
    }
    expect(out).toContain('EADDRINUSE');
    expect(out).toContain('"msg":"nodelet failed to start"');
  });
});

describe("V8's optimizing tiers during start-up (bin/node-runtime.mjs, holdOptimizingTiers)", () => {
  const rootDir = standaloneRoot('nodelet-tiers-');

  it('the nodelet command turns Maglev and TurboFan off before the agent loads and on again once it has started', async () => {
    // A preload that writes down every V8 flag the process sets, with the time and pid.
    const flags = join(rootDir, 'flags.jsonl');
    const preload = join(rootDir, 'record-flags.mjs');
    writeFileSync(
      preload,
      `import { appendFileSync } from 'node:fs';\n` +
        `const v8 = process.getBuiltinModule('node:v8');\n` +
        `const set = v8.setFlagsFromString.bind(v8);\n` +
        `v8.setFlagsFromString = (f) => { appendFileSync(${JSON.stringify(flags)}, JSON.stringify({ f, t: Date.now(), pid: process.pid }) + '\\n'); return set(f); };\n`,
    );
    const args = [
      `--import=${preload}`,
      join(ROOT, 'bin', 'nodelet.mjs'),
      `--root-dir=${rootDir}`,
      '--port=0',
      '--healthz-port=0',
      '--hostname-override=tiers',
    ];
    const p = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (c) => (out += c));
    p.stderr.on('data', (c) => (out += c));
    const exited = new Promise<number | null>((r) => p.on('exit', (code) => r(code)));
    try {
      await eventually('nodelet running', async () => out.includes('"msg":"nodelet is running"'), 60_000);
      await eventually('the tiers released', async () => readFileSync(flags, 'utf8').includes('"--turbofan"'), 10_000);
    } finally {
      p.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    const line = (msg: string) => JSON.parse(out.split('\n').find((l) => l.includes(`"msg":"${msg}"`))!) as { time: number; pid: number };
    const starting = line('starting nodelet');
    const running = line('nodelet is running');
    const set = readFileSync(flags, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { f: string; t: number; pid: number })
      .filter((r) => r.pid === starting.pid && /maglev|turbofan/.test(r.f));
    expect(set.map((r) => r.f)).toEqual(['--no-maglev', '--no-turbofan', '--maglev', '--turbofan']);
    expect(set[1]!.t).toBeLessThanOrEqual(starting.time);
    expect(set[2]!.t).toBeGreaterThanOrEqual(running.time);
  });
});

describe('standalone mode with --pod-cidr', () => {
  const rootDir = standaloneRoot('nodelet-standalone-net-');
  const iface = `ndlsa${process.pid % 100000}`;
  afterAll(() => {
    spawn('ip', ['link', 'del', iface], { stdio: 'ignore' });
  });

  it('gives the static pod an IP from --pod-cidr on --pod-interface and frees it once the pod finished', async () => {
    const args = [join(ROOT, 'bin', 'nodelet.mjs'), `--root-dir=${rootDir}`, '--port=0', '--healthz-port=0', '--hostname-override=standalone-net'];
    const p = spawn(process.execPath, [...args, '--pod-cidr=10.63.7.0/29', `--pod-interface=${iface}`], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (c) => (out += c));
    p.stderr.on('data', (c) => (out += c));
    const exited = new Promise<number | null>((r) => p.on('exit', (code) => r(code)));
    try {
      await eventually('the static pod IP released', async () => out.includes('"msg":"released pod IPs"'), 60_000);
      expect(out).toContain('"podCIDRs":["10.63.7.0/29"],"interface":"' + iface + '","msg":"pod network ready"');
      expect(out).toContain('"ips":["10.63.7.2"],"msg":"released pod IPs"');
      expect(out).toContain('pod default/hello-wasi-standalone-net is Succeeded');
      expect(readdirSync(join(rootDir, 'network', 'allocations'))).toEqual([]);
    } finally {
      p.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});

describe('a static pod on the external WASI runtime (the default) across a nodelet SIGKILL', () => {
  const rootDir = standaloneRoot('nodelet-static-adopt-');
  const manifests = join(rootDir, 'manifests');

  /** Starts nodelet on the manifests; resolves its output so far, its exit and a kill. */
  function start(): { out: () => string; exited: Promise<number | string | null>; kill: (s: NodeJS.Signals) => void } {
    const args = [join(ROOT, 'bin', 'nodelet.mjs'), `--root-dir=${rootDir}`, `--pod-manifest-path=${manifests}`, '--port=0', '--healthz-port=0'];
    const p = spawn(process.execPath, [...args, '--hostname-override=static-adopt'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (c) => (out += c));
    p.stderr.on('data', (c) => (out += c));
    const exited = new Promise<number | string | null>((r) => p.on('exit', (code, signal) => r(code ?? signal)));
    return { out: () => out, exited, kill: (s) => p.kill(s) };
  }

  it('is re-adopted by the next nodelet: same container, one start line, ticks without a gap, restart count 0', async () => {
    mkdirSync(manifests);
    copyFileSync(await buildWasmModule('sleep'), join(manifests, 'sleep.wasm'));
    writeFileSync(
      join(manifests, 'ticker.yaml'),
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: ticker\n  namespace: default\nspec:\n  containers:\n    - name: main\n      image: file:sleep.wasm\n      args: ["3600"]\n',
    );
    const logOf = () => {
      const dir = readdirSync(join(rootDir, 'logs', 'pods')).find((d) => d.startsWith('default_ticker-static-adopt_'));
      return dir ? readFileSync(join(rootDir, 'logs', 'pods', dir, 'main', '0.log'), 'utf8') : '';
    };
    const ticks = () => [...logOf().matchAll(/stdout F tick (\d+)$/gm)].map((m) => Number(m[1]));
    const first = start();
    await eventually('two ticks', async () => ticks().length >= 2, 60_000);
    const runtime = wasiRuntimePid(rootDir);
    expect(runtime).toBeDefined();
    first.kill('SIGKILL');
    await first.exited;
    const before = ticks().length;
    await eventually('a tick while no nodelet runs', async () => ticks().length > before, 20_000);

    const second = start();
    try {
      await eventually('the static pod re-adopted', async () => second.out().includes('re-adopted running container'), 60_000);
      expect(second.out()).not.toContain('started the wasi runtime process');
      expect(second.out()).toContain('connected to the running wasi runtime');
      expect(second.out()).not.toContain('released a container no pod claims');
      expect(wasiRuntimePid(rootDir)).toBe(runtime);
      const n = ticks().length;
      await eventually('ticks go on', async () => ticks().length > n + 1, 20_000);
    } finally {
      second.kill('SIGTERM');
    }
    expect(await second.exited).toBe(0);
    const log = logOf();
    expect(log.match(/stdout F sleeping 3600$/gm)).toHaveLength(1);
    const seen = ticks();
    expect(seen).toEqual(seen.map((_, i) => i + 1));
    // The runtime kept running after the SIGTERM too; stopping it on purpose ends the container.
    expect(() => process.kill(runtime!, 0)).not.toThrow();
  });
});

/**
 * `npm start`: standalone mode with no cluster runs the bundled static pod
 * (a hello-world Wasm module shipped in the repo) to completion, its logs are
 * readable through the kubelet API with the local client certificate, and an
 * anonymous caller is refused.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from './support/kube.ts';

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

describe('npm start (standalone mode)', () => {
  const rootDir = mkdtempSync(join(tmpdir(), 'nodelet-standalone-'));
  afterAll(() => rmSync(rootDir, { recursive: true, force: true }));

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
  });
});

describe('a SIGTERM while nodelet is still starting', () => {
  const rootDir = mkdtempSync(join(tmpdir(), 'nodelet-early-term-'));
  afterAll(() => rmSync(rootDir, { recursive: true, force: true }));

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

describe('standalone mode with --pod-cidr', () => {
  const rootDir = mkdtempSync(join(tmpdir(), 'nodelet-standalone-net-'));
  const iface = `ndlsa${process.pid % 100000}`;
  afterAll(() => {
    rmSync(rootDir, { recursive: true, force: true });
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

/** The http-probe provider through the plugin API only, against a local HTTP server. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Logger, type PodLifecycleContext, type PodObject, type PodStatusReport } from '@nodelet/plugin-api/v1';
import { parseCriLine } from '@nodelet/plugin-api/v1/toolkit';
import createProvider, {
  createHttpProbeProvider,
  parseProbeArgs,
  statusMatches,
  validateHttpProbeConfig,
  type HttpProbeProviderOptions,
} from '../src/index.ts';

const log: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => log };
let server: Server;
let base = '';
let root: string;
const hits = new Map<string, number>();

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'provider-http-probe-'));
  server = createServer((req, res) => {
    const path = req.url ?? '/';
    const n = (hits.get(path) ?? 0) + 1;
    hits.set(path, n);
    if (path === '/ok') return res.end('ready');
    if (path.startsWith('/flaky')) return n <= 2 ? res.writeHead(503).end('warming up') : res.end('ready now');
    if (path === '/moved') return res.writeHead(302, { location: 'http://example.invalid/' }).end();
    if (path === '/hang') return undefined;
    res.writeHead(500).end('broken');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(root, { recursive: true, force: true });
});

let n = 0;
interface C {
  name: string;
  image: string;
  args?: string[];
  command?: string[];
}

function pod(containers: C[], o: { init?: C[]; restartPolicy?: 'Always' | 'OnFailure' | 'Never' } = {}): PodObject {
  const uid = `0000000${++n}-aaaa-bbbb-cccc-dddddddddddd`;
  return {
    metadata: { namespace: 'default', name: `p${n}`, uid },
    spec: { containers, initContainers: o.init, restartPolicy: o.restartPolicy ?? 'Never' },
    raw: {},
  };
}

function context(p: PodObject, env: Record<string, string> = {}, onChange?: () => void) {
  const abort = new AbortController();
  const changes = { n: 0 };
  const all = [...(p.spec.initContainers ?? []), ...p.spec.containers];
  const ctx: PodLifecycleContext = {
    log,
    event: () => undefined,
    signal: abort.signal,
    podDir: join(root, p.metadata.uid),
    async resolveContainer(name) {
      const c = all.find((x) => x.name === name)!;
      const args = (c.args ?? []).map((a) => a.replace(/\$\((\w+)\)/g, (_, v: string) => env[v] ?? ''));
      return { name, image: c.image!, argv: [name, ...args], env, mounts: [], limits: {} };
    },
    logPath: (name, restartCount) => join(root, p.metadata.uid, name, `${restartCount}.log`),
    statusChanged: () => {
      changes.n++;
      onChange?.();
    },
  };
  return { ctx, abort, changes };
}

const lines = (p: PodObject, name: string, restartCount = 0) =>
  readFileSync(join(root, p.metadata.uid, name, `${restartCount}.log`), 'utf8')
    .trim()
    .split('\n')
    .map((l) => parseCriLine(l)!)
    .map((l) => `${l.stream} ${l.content}`);

async function until(provider: ReturnType<typeof createProvider>, p: PodObject, ok: (s: PodStatusReport) => boolean): Promise<PodStatusReport> {
  let last: PodStatusReport | undefined;
  await vi.waitFor(
    () => {
      last = provider.pods.getPodStatus(p.metadata);
      if (!last || !ok(last)) throw new Error(`not yet: ${JSON.stringify(last)}`);
    },
    { timeout: 10_000, interval: 10 },
  );
  return last!;
}
const done = (s: PodStatusReport) => s.phase === 'Succeeded' || s.phase === 'Failed';
const fast = (o: HttpProbeProviderOptions = {}) => createHttpProbeProvider({ backoff: { initialMs: 10, maxMs: 20 }, ...o });

describe('http-probe provider', () => {
  it('runs init then app probes to Succeeded, retrying until the answer matches, with every attempt in the log', async () => {
    const provider = fast();
    const p = pod([{ name: 'web', image: `${base}/flaky-a`, args: ['--interval=20ms', '--contains=ready'] }], {
      init: [{ name: 'wait', image: `${base}/ok` }],
    });
    const { ctx, changes } = context(p);
    await provider.pods.createPod(p, ctx);
    const s = await until(provider, p, done);
    expect(s).toMatchObject({ phase: 'Succeeded', reason: 'Completed' });
    expect(s.initContainers![0]).toMatchObject({ name: 'wait', restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } });
    expect(s.containers![0]).toMatchObject({
      name: 'web',
      ready: false,
      containerID: expect.stringMatching(/^http-probe:\/\/00000001-web-0$/),
      state: { terminated: { exitCode: 0, reason: 'Completed' } },
    });
    expect(lines(p, 'wait')).toEqual([expect.stringMatching(new RegExp(`^stdout GET ${base}/ok → 200 OK \\(\\d+ ms\\)$`))]);
    expect(lines(p, 'web')).toEqual([
      expect.stringMatching(/^stderr GET .*\/flaky-a → 503 Service Unavailable \(\d+ ms\); body lacks "ready"$/),
      expect.stringMatching(/^stderr GET .*\/flaky-a → 503 Service Unavailable \(\d+ ms\); body lacks "ready"$/),
      expect.stringMatching(/^stdout GET .*\/flaky-a → 200 OK \(\d+ ms\)$/),
    ]);
    expect(changes.n).toBeGreaterThan(4);
  });

  it('fails a pod whose probe runs out of attempts (restartPolicy Never), reporting why', async () => {
    const provider = fast();
    const p = pod([{ name: 'api', image: `${base}/broken`, args: ['--attempts=2', '--interval=10ms'] }]);
    await provider.pods.createPod(p, context(p).ctx);
    const s = await until(provider, p, done);
    const why = `no answer matching 2xx after 2 attempts; last: GET ${base}/broken → 500 Internal Server Error`;
    expect(s).toMatchObject({ phase: 'Failed', reason: 'Error', message: expect.stringContaining(`container "api": ${why}`) });
    expect(s.containers![0]!.state).toMatchObject({ terminated: { exitCode: 1, reason: 'Error', message: expect.stringContaining(why) } });
    expect(lines(p, 'api')).toHaveLength(2);
  });

  it('does not follow redirects: a 302 is the answer (and matches --expect=302)', async () => {
    const provider = fast();
    const p = pod([
      { name: 'a', image: `${base}/moved`, args: ['--attempts=1'] },
      { name: 'b', image: `${base}/moved`, args: ['--expect=301,302'] },
    ]);
    await provider.pods.createPod(p, context(p).ctx);
    const s = await until(provider, p, done);
    expect(s.containers!.map((c) => ('terminated' in c.state ? c.state.terminated.exitCode : -1))).toEqual([1, 0]);
    expect(lines(p, 'b')).toEqual([expect.stringMatching(/^stdout GET .*\/moved → 302 Found/)]);
  });

  it('restarts under OnFailure through CrashLoopBackOff, with a new log file per run', async () => {
    const provider = fast();
    const p = pod([{ name: 'svc', image: `${base}/flaky-b`, args: ['--attempts=2', '--interval=5ms'] }], { restartPolicy: 'OnFailure' });
    await provider.pods.createPod(p, context(p).ctx);
    const s = await until(provider, p, done);
    expect(s.phase).toBe('Succeeded');
    expect(s.containers![0]).toMatchObject({ restartCount: 1, state: { terminated: { exitCode: 0 } }, containerID: expect.stringMatching(/-svc-1$/) });
    expect(lines(p, 'svc', 0)).toHaveLength(2);
    expect(lines(p, 'svc', 1)).toEqual([expect.stringMatching(/→ 200 OK/)]);
  });

  it('stops running probes when the pod is deleted (exit 143) and forgets the pod', async () => {
    const provider = fast();
    const p = pod(
      [
        { name: 'forever', image: `${base}/broken`, args: ['--interval=10ms'] },
        { name: 'stuck', image: `${base}/hang` },
      ],
      { restartPolicy: 'Always' },
    );
    let seen: PodStatusReport | undefined;
    const { ctx } = context(p, {}, () => {
      seen = provider.pods.getPodStatus(p.metadata) ?? seen;
    });
    await provider.pods.createPod(p, ctx);
    await until(provider, p, (s) => s.phase === 'Running' && s.containers!.every((c) => 'running' in c.state && c.ready));
    await vi.waitFor(() => expect(lines(p, 'forever').length).toBeGreaterThan(1), { timeout: 5000, interval: 10 });
    await provider.pods.deletePod(p, ctx, 30_000);
    expect(seen!.containers!.map((c) => c.state)).toEqual([
      { terminated: expect.objectContaining({ exitCode: 143, reason: 'Error', message: 'stopped: the pod was deleted' }) },
      { terminated: expect.objectContaining({ exitCode: 143, reason: 'Error', message: 'stopped: the pod was deleted' }) },
    ]);
    expect(provider.pods.getPodStatus(p.metadata)).toBeUndefined();
    const before = lines(p, 'forever').length;
    await new Promise((r) => setTimeout(r, 50)); // a fixed wait: nothing may be written after the deletion
    expect(lines(p, 'forever')).toHaveLength(before);
  });

  it('reports a host it cannot resolve as ImagePullBackOff and keeps retrying', async () => {
    const asked: string[] = [];
    const provider = fast({
      resolveHost: async (h) => {
        asked.push(h);
        throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' });
      },
    });
    const p = pod([{ name: 'x', image: 'http://svc.example.invalid/healthz' }]);
    const { ctx } = context(p);
    await provider.pods.createPod(p, ctx);
    const s = await until(provider, p, (x) => x.reason === 'ImagePullBackOff');
    expect(s).toMatchObject({ phase: 'Pending', message: 'cannot resolve host "svc.example.invalid": ENOTFOUND' });
    expect(s.containers![0]!.state).toEqual({ waiting: { reason: 'ImagePullBackOff', message: 'cannot resolve host "svc.example.invalid": ENOTFOUND' } });
    await vi.waitFor(() => expect(asked.length).toBeGreaterThan(1), { timeout: 5000, interval: 10 });
    await provider.pods.deletePod(p, ctx, 0);
  });

  it('refuses pods it can never run with branded InvalidArgument errors, before running anything', async () => {
    const provider = createProvider({ allowHosts: ['127.0.0.1'] });
    const refuse = (c: C) => {
      const p = pod([c]);
      return provider.pods.createPod(p, context(p).ctx).then(
        () => 'created',
        (e: { code?: string; message: string }) => `${e.code}: ${e.message}`,
      );
    };
    expect(await refuse({ name: 'a', image: 'ftp://127.0.0.1/x' })).toBe('InvalidArgument: container "a": image "ftp://127.0.0.1/x" is not an http(s) URL');
    expect(await refuse({ name: 'b', image: 'busybox:1.36' })).toMatch(/^InvalidArgument: container "b": image "busybox:1.36" is not an http\(s\) URL/);
    expect(await refuse({ name: 'c', image: 'http://10.0.0.1/' })).toBe(
      'InvalidArgument: container "c": host "10.0.0.1" is not allowed on this node (allowed: 127.0.0.1)',
    );
    expect(await refuse({ name: 'd', image: `${base}/ok`, command: ['curl'] })).toMatch(
      /^InvalidArgument: container "d": http-probe containers take no command/,
    );
    expect(await refuse({ name: 'e', image: `${base}/ok`, args: ['--retries=3'] })).toMatch(/^InvalidArgument: container "e": unknown flag --retries/);
    expect(await refuse({ name: 'f', image: 'http://u:pw@127.0.0.1/' })).toBe('InvalidArgument: container "f": the image URL must not carry credentials');
  });

  it('checks args with $(VAR) after core expands them: a bad value fails the pod in its Error state', async () => {
    const provider = fast();
    const p = pod([{ name: 'v', image: `${base}/ok`, args: ['--interval=$(EVERY)'] }]);
    await provider.pods.createPod(p, context(p, { EVERY: 'often' }).ctx);
    const s = await until(provider, p, done);
    expect(s).toMatchObject({ phase: 'Failed', reason: 'Error', message: 'container "v": --interval=often is not a positive duration (e.g. 500ms, 5s, 1m)' });
    expect(s.containers![0]!.state).toMatchObject({ waiting: { reason: 'CreateContainerError' } });
  });

  it('parses flags and status patterns', () => {
    expect(parseProbeArgs('c', ['--expect=200,3xx', '--interval=1.5s', '--timeout=250ms', '--attempts=4', '--contains=a=b'])).toEqual({
      expect: '200,3xx',
      intervalMs: 1500,
      timeoutMs: 250,
      attempts: 4,
      contains: 'a=b',
    });
    expect(() => parseProbeArgs('c', ['--expect=ok'])).toThrow(/not a list of status codes/);
    expect(() => parseProbeArgs('c', ['plain'])).toThrow(/is not a --flag=value/);
    expect([200, 204, 302, 404].map((s) => statusMatches('204,3xx', s))).toEqual([false, true, true, false]);
  });
});

describe('http-probe configuration (--provider-config http-probe=<file>)', () => {
  it('takes allowHosts from its file (lower-cased), and refuses anything else with the reason', () => {
    expect(validateHttpProbeConfig({ allowHosts: ['Example.COM ', '127.0.0.1'] })).toEqual({ allowHosts: ['example.com', '127.0.0.1'] });
    expect(validateHttpProbeConfig(null)).toEqual({});
    expect(() => validateHttpProbeConfig(['a'])).toThrow('the configuration must be a mapping');
    expect(() => validateHttpProbeConfig({ allowHost: ['a'] })).toThrow('unknown field(s) allowHost (known: allowHosts)');
    expect(() => validateHttpProbeConfig({ allowHosts: 'a' })).toThrow('allowHosts must be a list of host names');
  });

  it("init's configuration overrides the options: a pod for a host not listed is refused", async () => {
    const provider = createProvider({ allowHosts: ['localhost'] });
    const images = { pull: () => Promise.reject(new Error('unused')) };
    await provider.init!({ log, rootDir: root, images, signal: new AbortController().signal, config: { allowHosts: ['127.0.0.1'] } });
    const p = pod([{ name: 'c', image: 'http://localhost:1/x' }]);
    const { ctx } = context(p);
    await expect(provider.pods.createPod(p, ctx)).rejects.toThrow('host "localhost" is not allowed on this node (allowed: 127.0.0.1)');
  });
});

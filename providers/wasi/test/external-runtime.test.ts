/**
 * The `wasi` provider with its external runtime process: containers live in
 * the runtime, survive the provider's (nodelet's) shutdown and are re-adopted
 * by a new provider with the same ids and log files; when the runtime dies,
 * its containers end as upstream reports a lost sandbox and a new runtime is
 * started.
 */
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ContainerSpec, ServiceClient, ServiceResolver } from '@nodelet/plugin-api/v1';
import { isProviderError } from '@nodelet/plugin-api/v1';
import { ExternalWasiProvider, runtimeMode, runtimePid, SOCKET_NAME, WasiProvider } from '../src/index.ts';
import createProvider from '../src/index.ts';
import { FakeImages, logText, podContext, providerContext, pulledFile, pulledFixture, scratch, spec } from './helpers.ts';
import { buildStartLoopModule } from '../../../test/harness/wasm-modules.ts';
import { buildComponent } from '../../../test/harness/wasm-components.ts';
import { until } from '../../../test/harness/until.ts';

const tmp = scratch();
const images = new FakeImages();
const fresh = async () => {
  const p = new ExternalWasiProvider('nodelet-wasi://test');
  await p.init(providerContext(images, tmp.dir));
  return p;
};

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

let provider: ExternalWasiProvider;
beforeAll(async () => {
  provider = await fresh();
});
afterAll(async () => {
  await provider?.shutdown();
  const pid = runtimePid(tmp.dir);
  if (pid !== undefined && alive(pid)) {
    process.kill(pid, 'SIGTERM');
    await until('the runtime to stop', () => !alive(pid));
  }
  tmp.cleanup();
});

describe('the external wasi runtime', () => {
  it('is not started by init but by the first pull (a node without WASI pods runs none); spawned in its own process group, with a pid file and a socket under the provider root', async () => {
    expect(runtimePid(tmp.dir)).toBeUndefined();
    expect(await provider.listContainers()).toEqual([]);
    expect(runtimePid(tmp.dir)).toBeUndefined();
    await provider.pullImage('fixture:sleep', { pullPolicy: 'IfNotPresent', credentials: [] }, podContext());
    await until('the runtime started by the pull', () => runtimePid(tmp.dir) !== undefined && existsSync(join(tmp.dir, SOCKET_NAME)));
    const pid = runtimePid(tmp.dir);
    expect(pid).toBeDefined();
    expect(alive(pid!)).toBe(true);
    expect(pid).not.toBe(process.pid);
    expect(existsSync(join(tmp.dir, SOCKET_NAME))).toBe(true);
  });

  it('boots its first shared thread at its start, before any container (the first BestEffort start pays no thread boot)', async () => {
    await until('1 shared thread, no container', () => provider.threads().length === 1 && provider.threads().every((t) => t.containers === 0));
  });

  it('keeps a container running across a provider shutdown; a new provider re-adopts it with the same id and log', async () => {
    const s: ContainerSpec = spec(await pulledFixture('sleep'), tmp.dir, ['3600']);
    const c = await provider.startContainer(s, podContext());
    await until('tick 1', () => existsSync(s.logPath) && logText(s.logPath).includes('tick 1\n'));
    await provider.shutdown();
    const ticks = logText(s.logPath)
      .split('\n')
      .filter((l) => l.startsWith('tick')).length;
    await until(
      'a tick written while no provider is connected',
      () =>
        logText(s.logPath)
          .split('\n')
          .filter((l) => l.startsWith('tick')).length > ticks,
    );

    provider = await fresh();
    const listed = await provider.listContainers();
    expect(listed.map((x) => x.id)).toContain(s.id);
    const entry = listed.find((x) => x.id === s.id)!;
    expect(entry).toMatchObject({ name: 'main', pod: { uid: 'uid-1' }, exit: undefined });
    expect(entry.startedAt.getTime()).toBe(c.startedAt.getTime());
    const adopted = await provider.adoptContainer(s.id, podContext());
    expect(adopted?.id).toBe(s.id);
    expect(await provider.adoptContainer('no-such-id', podContext())).toBeUndefined();
    await adopted!.stop(0);
    expect((await adopted!.exit).exitCode).toBe(137);
    const text = logText(s.logPath);
    expect(text.match(/^sleeping 3600$/gm)).toHaveLength(1);
    const n = text
      .split('\n')
      .filter((l) => l.startsWith('tick'))
      .map((l) => Number(l.slice(5)));
    expect(n).toEqual(n.map((_, i) => i + 1));
    await until('the exit collected', async () => !(await provider.listContainers()).some((x) => x.id === s.id));
  });

  it('keeps the exit of a container that ended while no provider was connected, until it is adopted or released', async () => {
    const a = spec(await pulledFixture('sleep'), tmp.dir, ['1']);
    const b = spec(await pulledFixture('sleep'), tmp.dir, ['1']);
    await provider.startContainer(a, podContext());
    await provider.startContainer(b, podContext());
    await provider.shutdown();
    provider = await fresh();
    const exitOf = async (id: string) => (await provider.listContainers()).find((x) => x.id === id)?.exit;
    await until('both ended', async () => (await exitOf(a.id)) !== undefined && (await exitOf(b.id)) !== undefined);
    expect(await exitOf(a.id)).toMatchObject({ exitCode: 0, reason: 'Completed' });
    const adopted = await provider.adoptContainer(a.id, podContext());
    expect(await adopted!.exit).toMatchObject({ exitCode: 0, reason: 'Completed' });
    await provider.releaseContainer(b.id);
    await until('both collected', async () => {
      const ids = (await provider.listContainers()).map((x) => x.id);
      return !ids.includes(a.id) && !ids.includes(b.id);
    });
  });

  it('resizes a container in place through the runtime (protocol 1.2), also one re-adopted by a new provider', async () => {
    const MiB = 1 << 20;
    const s = spec(await pulledFixture('grow-on-demand'), tmp.dir, ['12'], { limits: { memoryBytes: 8 * MiB }, qosClass: 'Burstable' });
    await provider.startContainer(s, podContext());
    await until('waiting for memory', () => existsSync(s.logPath) && logText(s.logPath).includes('waiting for memory at'));
    await provider.shutdown();
    provider = await fresh();
    const adopted = await provider.adoptContainer(s.id, podContext());
    expect(await provider.resizeContainer(s.id, { memoryBytes: 16 * MiB })).toEqual({ applied: true });
    await until('grown', () => logText(s.logPath).includes('grown 12 MiB\n'));
    expect(await provider.resizeContainer(s.id, { memoryBytes: MiB })).toMatchObject({ applied: false, memoryUsageBytes: expect.any(Number) });
    expect(await provider.resizeContainer('no-such-id', { memoryBytes: MiB }).catch((e: unknown) => e)).toMatchObject({ code: 'NotFound' });
    await adopted!.stop(0);
  });

  it('forwards kubectl attach stdin through the runtime (protocol 1.1), also to a container re-adopted by a new provider', async () => {
    const s: ContainerSpec = { ...spec(await pulledFixture('stdin-echo'), tmp.dir, [], { stdin: true }), restartCount: 3 };
    const c = await provider.startContainer(s, podContext());
    await until('ready', () => existsSync(s.logPath) && logText(s.logPath).includes('ready'));
    const session = (signal: AbortSignal, ...chunks: string[]) =>
      provider.attach(c.id, {
        stdin: (async function* () {
          for (const x of chunks) yield Buffer.from(x);
          await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
        })(),
        stdout: () => undefined,
        stderr: () => undefined,
        tty: false,
        signal,
      });
    const ac = new AbortController();
    const first = session(ac.signal, 'hello runtime\n');
    await until('the first line echoed', () => logText(s.logPath).includes('echo: hello runtime'));
    ac.abort();
    await first;
    // A new nodelet (provider) re-adopts it; the runtime kept the stdin pipe open, so attach goes on.
    await provider.shutdown();
    provider = await fresh();
    expect((await provider.listContainers()).find((x) => x.id === s.id)).toMatchObject({ restartCount: 3, exit: undefined });
    const adopted = (await provider.adoptContainer(s.id, podContext()))!;
    const ac2 = new AbortController();
    const second = provider.attach(adopted.id, {
      stdin: (async function* () {
        yield Buffer.from('after the restart\n');
        await new Promise((r) => ac2.signal.addEventListener('abort', r, { once: true }));
      })(),
      stdout: () => undefined,
      stderr: () => undefined,
      tty: false,
      signal: ac2.signal,
    });
    await until('the second line echoed', () => logText(s.logPath).includes('echo: after the restart'));
    ac2.abort();
    await second;
    expect(logText(s.logPath)).toMatch(/^ready\necho: hello runtime\necho: after the restart\n/);
    // A stop wins over the module's own end (it reads the end of its closed stdin): 137.
    await adopted.stop(0);
    expect((await adopted.exit).exitCode).toBe(137);
    // A container without stdin: true is refused (InvalidArgument), an unknown one NotFound.
    const plain = await provider.startContainer(spec(await pulledFixture('sleep'), tmp.dir, ['3600']), podContext());
    const none = { stdin: (async function* () {})(), stdout: () => undefined, stderr: () => undefined, tty: false, signal: new AbortController().signal };
    await expect(provider.attach(plain.id, none)).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(provider.attach('no-such-id', none)).rejects.toMatchObject({ code: 'NotFound' });
    await plain.stop(0);
  });

  it('gives up a start in flight when the pod is deleted (cancel, 1.1): a start function that loops ends at once, not at the start timeout', async () => {
    const s = spec(pulledFile(await buildStartLoopModule(), 'start-loop'), tmp.dir);
    const abort = new AbortController();
    const started = provider.startContainer(s, { ...podContext(), signal: abort.signal });
    setTimeout(() => abort.abort(), 300);
    const t = Date.now();
    await expect(started).rejects.toMatchObject({ code: 'Unavailable', message: expect.stringContaining('the pod is being deleted') });
    // Far below the runtime's default start timeout (20 s), after which the start would fail otherwise.
    expect(Date.now() - t).toBeLessThan(10_000);
    expect((await provider.listContainers()).some((x) => x.id === s.id)).toBe(false);
  });

  it('reports the containers of a runtime that died as ContainerStatusUnknown/137 (SandboxChanged); the next start starts a new runtime', async () => {
    const s = spec(await pulledFixture('sleep'), tmp.dir, ['3600']);
    const events: string[] = [];
    const c = await provider.startContainer(s, { ...podContext(), event: (_t, reason) => void events.push(reason) });
    const old = runtimePid(tmp.dir)!;
    process.kill(old, 'SIGKILL');
    const exit = await c.exit;
    expect(exit).toMatchObject({ exitCode: 137, reason: 'ContainerStatusUnknown' });
    expect(events).toContain('SandboxChanged');
    const again = await provider.startContainer(spec(await pulledFixture('exit-code'), tmp.dir, ['0']), podContext());
    expect((await again.exit).exitCode).toBe(0);
    expect(runtimePid(tmp.dir)).toBeDefined();
    expect(runtimePid(tmp.dir)).not.toBe(old);
  });

  it("forwards the runtime's shared-thread loads (threads(), for /metrics) from one call to the next", async () => {
    const s = { ...spec(await pulledFixture('sleep'), tmp.dir, ['3600']), qosClass: 'BestEffort' as const };
    const c = await provider.startContainer(s, podContext());
    await until('the shared thread reported', () => provider.threads().some((t) => t.containers >= 1));
    await c.stop(0);
  });

  it('asks nodelet where containers connect (protocol 1.3: Services): a component in the runtime reaches a Service by name; no ready endpoint is refused', async () => {
    const component = pulledFile(await buildComponent('http-get'), 'fixture:http-get');
    const upstream = createHttpServer((req, res) => res.end(`upstream saw ${req.url} as ${req.headers.host}`));
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const upstreamPort = (upstream.address() as AddressInfo).port;
    const asked: { host: string; port: number; client: ServiceClient }[] = [];
    const ref = { namespace: 'ns', name: 'web', port: '' };
    const services: ServiceResolver = {
      resolve: () => ({ kind: 'direct' }),
      lookup: () => ({ kind: 'forward' }),
      route: (host, port, client) => {
        asked.push({ host, port, client });
        if (host === 'web.ns.svc.cluster.local') return { kind: 'connect', host: '127.0.0.1', port: upstreamPort, service: ref };
        if (host === '10.0.0.11') return { kind: 'refused', service: ref, message: 'Service ns/web port 80/TCP has no ready endpoints' };
        return { kind: 'connect', host, port };
      },
    };
    const p = new ExternalWasiProvider('nodelet-wasi://test');
    await p.init({ ...providerContext(images, tmp.dir), services });
    const pod = { namespace: 'ns', name: 'client', uid: 'uid-client' };
    try {
      const s = spec(component, tmp.dir, ['http://web.ns.svc.cluster.local/a', 'http://10.0.0.11/b'], {
        pod,
        network: { podIPs: ['127.0.0.1'], hostNetwork: false },
      });
      const c = await p.startContainer(s, podContext());
      expect((await c.exit).exitCode).toBe(0);
      expect(logText(s.logPath).split('\n')).toEqual([
        `http://web.ns.svc.cluster.local/a -> 200 upstream saw /a as 127.0.0.1:${upstreamPort}`,
        'http://10.0.0.11/b -> error ErrorCode::ConnectionRefused',
        '',
      ]);
      expect(asked).toEqual([
        { host: 'web.ns.svc.cluster.local', port: 80, client: { pod, ip: '127.0.0.1' } },
        { host: '10.0.0.11', port: 80, client: { pod, ip: '127.0.0.1' } },
      ]);
    } finally {
      await p.shutdown();
      upstream.close();
    }
  }, 600_000);

  it('refuses a runtime that answers with another protocol version instead of starting a second one', async () => {
    const other = scratch();
    const server = createServer((sock) =>
      sock.on('data', (d) => {
        const { id } = JSON.parse(d.toString().split('\n')[0]!) as { id: number };
        sock.write(`${JSON.stringify({ id, ok: false, error: { code: 'InvalidArgument', message: 'protocol version 1 is not served' } })}\n`);
      }),
    );
    await new Promise<void>((r) => server.listen(join(other.dir, SOCKET_NAME), r));
    try {
      const p = new ExternalWasiProvider('nodelet-wasi://test');
      const err = await p.init(providerContext(images, other.dir)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isProviderError(err) && err.code).toBe('Unavailable');
      expect((err as Error).message).toMatch(/protocol version 1 is not served.*stop it/);
      expect(runtimePid(other.dir)).toBeUndefined();
    } finally {
      server.close();
      other.cleanup();
    }
  });

  it('is chosen by NODELET_WASI_RUNTIME (external when unset); a wrong value is refused', () => {
    expect(runtimeMode({})).toBe('external');
    expect(runtimeMode({ NODELET_WASI_RUNTIME: '' })).toBe('external');
    expect(runtimeMode({ NODELET_WASI_RUNTIME: 'in-process' })).toBe('in-process');
    expect(runtimeMode({ NODELET_WASI_RUNTIME: 'external' })).toBe('external');
    expect(() => runtimeMode({ NODELET_WASI_RUNTIME: 'outside' })).toThrow(/in-process or external/);
    const before = process.env.NODELET_WASI_RUNTIME;
    try {
      process.env.NODELET_WASI_RUNTIME = 'external';
      const p = createProvider();
      expect(p).toBeInstanceOf(ExternalWasiProvider);
      expect(p.keepsContainers).toBe(true);
      expect(p.runtimeVersion).toBe(new WasiProvider().runtimeVersion);
    } finally {
      if (before === undefined) delete process.env.NODELET_WASI_RUNTIME;
      else process.env.NODELET_WASI_RUNTIME = before;
    }
  });
});

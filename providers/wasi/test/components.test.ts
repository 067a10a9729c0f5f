import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isInvalidArgument, isInvalidImage } from '@nodelet/plugin-api/v1';
import { WasiProvider } from '../src/index.ts';
import { wasmKindOf } from '../src/wasm-kind.ts';
import { buildComponent, type ComponentName } from '../../../test/harness/wasm-components.ts';
import { FakeImages, logText, podContext, providerContext, pulledFile, pulledFixture, scratch, spec } from './helpers.ts';
import { freePort } from '../../../test/harness/ports.ts';

let provider: WasiProvider;
const tmp = scratch();
const rootDir = join(tmp.dir, 'root');
beforeAll(async () => {
  mkdirSync(rootDir, { recursive: true });
  await buildComponent('hello-http'); // builds all test components (cargo, minutes when not cached)
  provider = new WasiProvider(); // in-process: the modules run in this test process
  await provider.init(providerContext(new FakeImages(), rootDir));
}, 600_000);
afterAll(async () => {
  await provider.shutdown();
  tmp.cleanup();
});

const pulled = async (name: ComponentName) => pulledFile(await buildComponent(name), `fixture:${name}`);

describe('wasmKindOf', () => {
  it('tells a component from a core module by the layer/version bytes', () => {
    expect(wasmKindOf(Uint8Array.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]))).toBe('module');
    expect(wasmKindOf(Uint8Array.from([0, 0x61, 0x73, 0x6d, 0x0d, 0, 1, 0]))).toBe('component');
    expect(wasmKindOf(Uint8Array.from([0, 0x61, 0x73, 0x6d, 2, 0, 0, 0]))).toBe('unknown');
    expect(wasmKindOf(Uint8Array.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]))).toBe('unknown');
    expect(wasmKindOf(Uint8Array.from([0, 0x61, 0x73]))).toBe('unknown');
  });
});

describe('wasi:cli components', () => {
  it('get args, env and a read-only volume; stdout/stderr go to the CRI log; the exit code is wasi:cli/exit’s', async () => {
    const vol = join(tmp.dir, 'config');
    mkdirSync(vol, { recursive: true });
    writeFileSync(join(vol, 'message'), 'from the volume\n');
    const s = spec(await pulled('cli-read'), tmp.dir, ['/config/message', '--write', '/config/new'], {
      env: { GREETING: 'hello env' },
      mounts: [{ name: 'config', containerPath: '/config', hostPath: vol, readOnly: true }],
    });
    const c = await provider.startContainer(s, podContext());
    const exit = await c.exit;
    expect(exit).toMatchObject({ exitCode: 3, reason: 'Error' });
    const out = logText(s.logPath);
    expect(out).toContain('args: /config/message --write /config/new\n');
    expect(out).toContain('greeting: hello env\n');
    expect(out).toContain('file /config/message: from the volume\n');
    expect(out).toMatch(/write \/config\/new: error: .*[Rr]ead-only/);
    expect(existsSync(join(vol, 'new'))).toBe(false);
    expect(logText(s.logPath, 'stderr')).toBe('exiting with 3\n');
    // transpiled once, kept under the provider's root dir by digest
    expect(readdirSync(join(rootDir, 'components'))).toContain(s.image.digest.slice('sha256:'.length));
  });

  it('writes to a writable volume and cannot leave it', async () => {
    const vol = join(tmp.dir, 'data');
    mkdirSync(vol, { recursive: true });
    writeFileSync(join(tmp.dir, 'secret'), 'outside\n');
    const s = spec(await pulled('cli-read'), tmp.dir, ['/data/../secret', '--write', '/data/new'], {
      mounts: [{ name: 'data', containerPath: '/data', hostPath: vol, readOnly: false }],
    });
    const exit = await (await provider.startContainer(s, podContext())).exit;
    expect(exit.exitCode).toBe(3);
    const out = logText(s.logPath);
    expect(out).toMatch(/file \/data\/\.\.\/secret: error: /);
    expect(out).not.toContain('outside');
    expect(out).toContain('write /data/new: ok\n');
    expect(existsSync(join(vol, 'new'))).toBe(true);
  });

  it('a mount whose host directory is a symlink is refused at start, as for preview1 modules', async () => {
    const real = join(tmp.dir, 'real-dir');
    mkdirSync(real, { recursive: true });
    symlinkSync(real, join(tmp.dir, 'link-dir'));
    const s = spec(await pulled('cli-read'), tmp.dir, ['/v/x'], {
      mounts: [{ name: 'v', containerPath: '/v', hostPath: join(tmp.dir, 'link-dir'), readOnly: false }],
    });
    const err = await provider.startContainer(s, podContext()).catch((e: unknown) => e);
    expect(isInvalidArgument(err)).toBe(true);
    expect((err as Error).message).toBe('container main: volume v: cannot open its host directory: ENOTDIR');
  });

  it('limits.memoryBytes caps the component’s memories: below what it needs to start it is refused (OOMKilled); 32 MiB runs', async () => {
    const small = spec(await pulled('cli-read'), tmp.dir, [], { limits: { memoryBytes: 65536 } });
    const err = await provider.startContainer(small, podContext()).catch((e: unknown) => e);
    expect(isInvalidArgument(err)).toBe(true);
    expect(err).toMatchObject({ reason: 'OOMKilled' });
    const ok = spec(await pulled('cli-read'), tmp.dir, [], { limits: { memoryBytes: 32 << 20 } });
    expect((await (await provider.startContainer(ok, podContext())).exit).exitCode).toBe(3);
  });

  it('a component importing an interface nodelet does not provide fails at start, naming it', async () => {
    const s = spec(await pulled('unsupported-import'), tmp.dir);
    const err = await provider.startContainer(s, podContext()).catch((e: unknown) => e);
    expect(isInvalidImage(err)).toBe(true);
    expect((err as Error).message).toMatch(/imports nodelet-test:absent\/ping@0\.1\.0, which nodelet does not provide/);
    expect(provider.runningCount).toBe(0);
  });

  it('preview1 modules still run as before beside components', async () => {
    const s = spec(await pulledFixture('hello'), tmp.dir, ['x']);
    const exit = await (await provider.startContainer(s, podContext())).exit;
    expect(exit.exitCode).toBe(0);
  });
});

describe('wasi:http components', () => {
  it('serve on the first TCP containerPort with POD_NAME from env, and stop', async () => {
    const port = await freePort();
    const s = spec(await pulled('hello-http'), tmp.dir, [], {
      env: { POD_NAME: 'web-1' },
      ports: [
        { containerPort: port + 0, protocol: 'TCP' },
        { containerPort: 9, protocol: 'TCP' },
      ],
      network: { podIPs: [], hostNetwork: false },
    });
    const c = await provider.startContainer(s, podContext());
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/any?x=${i}`);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('hello from web-1\n');
    }
    await c.stop(0);
    expect((await c.exit).exitCode).toBe(137);
    await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
  });

  it('make outbound requests through wasi:http/outgoing-handler', async () => {
    const upstream = createHttpServer((req, res) => res.end(`upstream saw ${req.url}`));
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const upstreamPort = (upstream.address() as { port: number }).port;
    const port = await freePort();
    const s = spec(await pulled('hello-http'), tmp.dir, [], {
      ports: [{ containerPort: port, protocol: 'TCP' }],
      network: { podIPs: ['127.0.0.1'], hostNetwork: false },
    });
    const c = await provider.startContainer(s, podContext());
    try {
      const res = await fetch(`http://127.0.0.1:${port}/fetch/127.0.0.1:${upstreamPort}/path?q=1`);
      expect(await res.text()).toBe('fetched 200: upstream saw /path?q=1\n');
    } finally {
      await c.stop(0);
      upstream.close();
    }
  });

  it('a port already taken fails the container with a clear message', async () => {
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as { port: number }).port;
    try {
      const s = spec(await pulled('hello-http'), tmp.dir, [], {
        ports: [{ containerPort: port, protocol: 'TCP' }],
        network: { podIPs: ['127.0.0.1'], hostNetwork: false },
      });
      const err = await provider.startContainer(s, podContext()).catch((e: unknown) => e);
      expect(isInvalidArgument(err)).toBe(true);
      expect((err as Error).message).toBe(`container main: port ${port} on 127.0.0.1 is already in use`);
      expect(provider.runningCount).toBe(0);
    } finally {
      srv.close();
    }
  });

  it('needs a declared TCP port', async () => {
    const s = spec(await pulled('hello-http'), tmp.dir);
    const err = await provider.startContainer(s, podContext()).catch((e: unknown) => e);
    expect(isInvalidArgument(err)).toBe(true);
    expect((err as Error).message).toContain('needs a TCP containerPort');
  });
});

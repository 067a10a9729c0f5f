import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isInvalidArgument } from '@nodelet/plugin-api/v1';
import { WasiProvider } from '../src/index.ts';
import { FakeImages, logText, podContext, providerContext, pulledFixture, scratch, spec } from './helpers.ts';
import { httpGet } from '../../../test/harness/http-get.ts';

let provider: WasiProvider;
const tmp = scratch();
beforeAll(async () => {
  provider = new WasiProvider(); // in-process: the modules run in this test process
  await provider.init(providerContext(new FakeImages()));
});
afterAll(async () => {
  await provider.shutdown();
  tmp.cleanup();
});

/** A port nobody listens on right now (the kernel's pick). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

describe('pre-opened listening sockets', () => {
  it('serves several HTTP requests from a C module on the declared port (fd after stdio and preopens)', async () => {
    const port = await freePort();
    const s = spec(await pulledFixture('http-server'), tmp.dir, ['--max=3'], {
      ports: [{ containerPort: port, protocol: 'TCP' }],
      network: { podIPs: [], hostNetwork: false },
    });
    const c = await provider.startContainer(s, podContext());
    const bodies: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await httpGet('127.0.0.1', port);
      expect(r.status).toBe(200);
      bodies.push(r.body);
    }
    expect(bodies).toEqual(['hello from wasm 1\n', 'hello from wasm 2\n', 'hello from wasm 3\n']);
    expect(await c.exit).toMatchObject({ exitCode: 0, reason: 'Completed' });
    const out = logText(s.logPath);
    expect(out).toContain('listening on fd 3\n');
    // Each accepted connection takes the lowest free descriptor (the listener's is 3).
    expect(out).toContain('served request 3 on fd 4\n');
  });

  it('places the socket after the preopened directories', async () => {
    const port = await freePort();
    const s = spec(await pulledFixture('http-server'), tmp.dir, ['--max=1'], {
      ports: [{ containerPort: port, protocol: 'TCP' }],
      mounts: [{ name: 'v', hostPath: tmp.dir, containerPath: '/data', readOnly: true }],
    });
    const c = await provider.startContainer(s, podContext());
    expect((await httpGet('127.0.0.1', port)).body).toBe('hello from wasm 1\n');
    expect(await c.exit).toMatchObject({ exitCode: 0 });
    expect(logText(s.logPath)).toContain('listening on fd 4\n');
  });

  it('answers EAGAIN to a non-blocking accept with nothing pending', async () => {
    const port = await freePort();
    const s = spec(await pulledFixture('http-server'), tmp.dir, ['--max=1', '--nonblock'], { ports: [{ containerPort: port, protocol: 'TCP' }] });
    const c = await provider.startContainer(s, podContext());
    expect((await httpGet('127.0.0.1', port)).body).toBe('hello from wasm 1\n');
    expect(await c.exit).toMatchObject({ exitCode: 0 });
    expect(logText(s.logPath)).toContain('accept with nothing pending: -1 EAGAIN\n');
  });

  it('fails the start with a clear message when the port is already taken', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const { port } = taken.address() as AddressInfo;
    try {
      const s = spec(await pulledFixture('http-server'), tmp.dir, [], { ports: [{ containerPort: port, protocol: 'TCP' }] });
      const err = await provider.startContainer(s, podContext()).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isInvalidArgument(err)).toBe(true);
      expect((err as Error).message).toContain(`cannot listen on 127.0.0.1:${port} (containerPort ${port}): the address is already in use`);
      expect(provider.runningCount).toBe(0);
    } finally {
      taken.close();
    }
  });

  it('gives a module without declared ports no socket: accept and send fail with an errno, no crash', async () => {
    const s = spec(await pulledFixture('http-server'), tmp.dir, []);
    const c = await provider.startContainer(s, podContext());
    expect(await c.exit).toMatchObject({ exitCode: 2 });
    const out = logText(s.logPath);
    expect(out).toMatch(/no socket: accept\(3\) = -1 errno (8|58) /);
    expect(out).toMatch(/send\(3\) = -1 errno (8|58)\n/);
  });

  it('stops a module blocked in accept, freeing its port', async () => {
    const port = await freePort();
    const s = spec(await pulledFixture('http-server'), tmp.dir, [], { ports: [{ containerPort: port, protocol: 'TCP' }] });
    const c = await provider.startContainer(s, podContext());
    expect((await httpGet('127.0.0.1', port)).body).toBe('hello from wasm 1\n');
    await c.stop(0);
    expect(await c.exit).toMatchObject({ exitCode: 137 });
    // The port can be listened on again at once.
    const again = createServer();
    await new Promise<void>((resolve, reject) => {
      again.once('error', reject);
      again.listen(port, '127.0.0.1', resolve);
    });
    again.close();
  });

  it('closes connections beyond half the descriptor budget at once; those within are served', async () => {
    const small = new WasiProvider({ maxOpenFiles: 8 }); // 4 connections per listener
    await small.init(providerContext(new FakeImages()));
    const port = await freePort();
    const s = spec(await pulledFixture('http-server'), tmp.dir, ['--max=4'], { ports: [{ containerPort: port, protocol: 'TCP' }] });
    const c = await small.startContainer(s, podContext());
    const socks: Socket[] = [];
    const track = (sock: Socket) => {
      socks.push(sock);
      sock.on('error', () => {});
      let got = '';
      sock.setEncoding('utf8');
      sock.on('data', (d) => (got += d));
      return new Promise<string>((resolve) => sock.on('close', () => resolve(got)));
    };
    try {
      // Four connections, each established before the next (the accept queue is in order): the module
      // waits for the first one's request, the others are pending. The fifth is one too many.
      const answers: Array<Promise<string>> = [];
      for (let i = 0; i < 4; i++) {
        const sock = connect(port, '127.0.0.1');
        answers.push(track(sock));
        await new Promise((r) => sock.once('connect', r));
      }
      expect(await track(connect(port, '127.0.0.1'))).toBe('');
      for (const sock of socks.slice(0, 4)) sock.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      const results = await Promise.all(answers);
      expect(results.map((r) => r.split('\r\n')[0])).toEqual(Array(4).fill('HTTP/1.1 200 OK'));
      expect(await c.exit).toMatchObject({ exitCode: 0 });
    } finally {
      for (const sock of socks) sock.destroy();
      await small.shutdown();
    }
  });
});

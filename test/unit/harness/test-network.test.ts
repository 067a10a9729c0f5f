/**
 * test/harness/test-network.ts: hosts in network namespaces of the test's own, joined to a LAN,
 * reached only through the harness's agents (Unix sockets), never by a route from the root
 * namespace to an address inside them but the LAN's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, connect, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../harness/ports.ts';
import { createTestNetwork, netnsUnavailable, type TestHost, type TestNetwork } from '../../harness/test-network.ts';

const unavailable = netnsUnavailable();

/** Reads everything `host:port` (on this namespace's loopback) answers to `send`. */
const exchange = (port: number, send: string) =>
  new Promise<string>((ok, fail) => {
    let got = '';
    const s = connect(port, '127.0.0.1', () => s.end(send));
    s.on('data', (d) => (got += String(d)))
      .on('end', () => ok(got))
      .on('error', fail);
  });

describe.skipIf(unavailable !== undefined)(`createTestNetwork (skipped where the machine ${unavailable ?? 'lacks CAP_NET_ADMIN'})`, () => {
  let net: TestNetwork;
  let a: TestHost;
  let b: TestHost;
  let rootServer: Server;
  let inner: ChildProcess | undefined;
  beforeAll(async () => {
    net = createTestNetwork();
    a = await net.addHost('a', { lan: true });
    b = await net.addHost('b', { lan: true });
    rootServer = createServer((c) => c.end(`root saw ${c.remoteAddress}`));
    await new Promise<void>((r) => rootServer.listen(0, '127.0.0.1', r));
  });
  afterAll(async () => {
    inner?.kill();
    rootServer?.close();
    await net?.dispose();
  });

  it('gives each host its own namespace and LAN address, no default route, and the LAN a /24 of 198.18.0.0/16', () => {
    expect(a.netns).not.toBe(b.netns);
    expect(net.lanPrefix).toMatch(/^198\.18\.\d+$/);
    expect([a.lanIP, b.lanIP]).toEqual([`${net.lanPrefix}.11`, `${net.lanPrefix}.12`]);
    expect(a.ip('route', 'show')).toBe(`${net.lanPrefix}.0/24 dev eth0 proto kernel scope link src ${a.lanIP} \n`);
  });

  it("forwards a root port into a host's loopback, and a host's loopback port out to the root namespace's", async () => {
    const port = (rootServer.address() as { port: number }).port;
    await a.forwardOut(port);
    const out = await a.dial({ host: '127.0.0.1', port });
    const seen = await new Promise<string>((ok) => {
      let got = '';
      out.on('data', (d) => (got += String(d))).on('end', () => ok(got));
      out.resume();
    });
    expect(seen).toBe('root saw 127.0.0.1');

    const inPort = await freePort();
    inner = spawn(
      'ip',
      [
        'netns',
        'exec',
        b.netns,
        process.execPath,
        '-e',
        `require('net').createServer((c)=>c.on('data',(d)=>c.end('b got '+d))).listen(${inPort},'127.0.0.1',()=>console.log('up'))`,
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    await new Promise((r) => inner!.stdout!.once('data', r));
    await b.forwardIn(inPort);
    expect(await exchange(inPort, 'ping')).toBe('b got ping');
  });

  it('dials from inside a host: a LAN neighbour is reached from its LAN address, an address no route leads to fails with ENETUNREACH', async () => {
    const port = await freePort();
    const server = spawn(
      'ip',
      [
        'netns',
        'exec',
        b.netns,
        process.execPath,
        '-e',
        `require('http').createServer((q,s)=>s.end('from '+q.socket.remoteAddress)).listen(${port},'${b.lanIP}',()=>console.log('up'))`,
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    try {
      await new Promise((r) => server.stdout!.once('data', r));
      expect(await a.httpGet(b.lanIP!, port)).toEqual({ status: 200, body: `from ${a.lanIP}` });
      await expect(a.dial({ host: '10.255.255.1', port })).rejects.toMatchObject({ code: 'ENETUNREACH' });
      await expect(a.dial({ host: b.lanIP!, port: port + 1 === 65536 ? 1 : port + 1 })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    } finally {
      server.kill();
    }
  });
});

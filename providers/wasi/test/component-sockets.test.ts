/**
 * wasi:sockets for components (worker/component-sockets.mjs) and the pod's outbound allow-list
 * (`wasi.nodelet.dev/allowed-outbound-hosts`), in-process with core's real Service resolver over a
 * hand-filled table: the sockets-client component talks to a TCP echo server on loopback directly,
 * through a ClusterIP and through a Service name; binds are held to the pod's IP and declared
 * ports; outside the allow-list a connect fails with access-denied and an HTTP request (jco path
 * and nodelet's per-request host) with HTTP-request-denied.
 */
import { mkdirSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isInvalidArgument, type ContainerSpec, type ServiceResolver } from '@nodelet/plugin-api/v1';
import { makeFdBudget, WasiProvider } from '../src/index.ts';
import { addressText, SocketBudget, socketAddress } from '../src/worker/component-sockets.mjs';
import { ALLOWED_OUTBOUND_HOSTS_ANNOTATION } from '../src/outbound-hosts.mjs';
import { NodeServiceResolver } from '../../../core/services/service-resolver.ts';
import { ServiceTable } from '../../../core/services/service-table.ts';
import { ep, service, slice, svcPort } from '../../../test/unit/services/fixtures.ts';
import { buildComponent } from '../../../test/harness/wasm-components.ts';
import { freePort } from '../../../test/harness/ports.ts';
import { FakeImages, logText, podContext, providerContext, pulledFile, scratch, spec } from './helpers.ts';

const VIP = '10.0.0.20';
const GONE_VIP = '10.0.0.21';
let provider: WasiProvider;
let echo: Server;
let echoPort: number;
let udpEcho: UdpSocket;
let udpPort: number;
let web: HttpServer;
let webPort: number;
const tmp = scratch();
const rootDir = join(tmp.dir, 'root');
const pod = { namespace: 'ns', name: 'client', uid: 'uid-sockets' };
const network = { podIPs: ['127.0.0.1'], hostNetwork: false };

beforeAll(async () => {
  mkdirSync(rootDir, { recursive: true });
  await buildComponent('sockets-client'); // builds all test components (cargo, minutes when not cached)
  echo = createServer((s) => s.pipe(s));
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
  echoPort = (echo.address() as AddressInfo).port;
  udpEcho = createSocket('udp4');
  udpEcho.on('message', (msg, from) => udpEcho.send(Buffer.concat([Buffer.from('echo '), msg]), from.port, from.address));
  await new Promise<void>((r) => udpEcho.bind(0, '127.0.0.1', r));
  udpPort = udpEcho.address().port;
  web = createHttpServer((req, res) => res.end(`web saw ${req.url}`));
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
  webPort = (web.address() as AddressInfo).port;
  // ns/echo: port 7 → the echo server; ns/gone: no endpoint.
  const table = new ServiceTable('n1');
  table.servicesSynced = true;
  table.slicesSynced = true;
  table.upsertService(service('ns', 'echo', { clusterIP: VIP, ports: [svcPort(7)] }));
  table.upsertSlice(slice('ns', 'echo', 'echo-1', [ep('127.0.0.1')], [{ name: '', port: echoPort }]));
  table.upsertService(service('ns', 'gone', { clusterIP: GONE_VIP, ports: [svcPort(7)] }));
  const resolver = new NodeServiceResolver({ table, clusterDomain: 'cluster.local', topology: { nodeName: 'n1' }, podDns: () => undefined });
  const services: ServiceResolver = {
    resolve: (...a) => resolver.resolve(...a),
    lookup: (...a) => resolver.lookup(...a),
    route: (...a) => resolver.route(...a),
  };
  provider = new WasiProvider({ maxOpenFiles: 16 }); // in-process: the components run in this test process
  await provider.init({ ...providerContext(new FakeImages(), rootDir), services });
}, 600_000);
afterAll(async () => {
  await provider?.shutdown();
  echo?.close();
  udpEcho?.close();
  web?.close();
  tmp.cleanup();
});

async function run(args: string[], over: Partial<ContainerSpec> = {}): Promise<string[]> {
  const s = spec(pulledFile(await buildComponent('sockets-client'), 'fixture:sockets-client'), tmp.dir, args, { pod, network, ...over });
  const c = await provider.startContainer(s, podContext());
  expect((await c.exit).exitCode).toBe(0);
  return logText(s.logPath).split('\n').slice(0, -1);
}

describe('socket addresses and the socket budget', () => {
  it('converts between WASI socket addresses and text, IPv6 in its shortest form', () => {
    expect(socketAddress('10.0.0.5', 80)).toEqual({ tag: 'ipv4', val: { port: 80, address: [10, 0, 0, 5] } });
    expect(socketAddress('fd00::5', 81)).toEqual({ tag: 'ipv6', val: { port: 81, flowInfo: 0, address: [0xfd00, 0, 0, 0, 0, 0, 0, 5], scopeId: 0 } });
    expect(socketAddress('::', 0).val.address).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(addressText(socketAddress('fd00:0:0:0:0:0:0:5', 1))).toBe('fd00::5');
    expect(addressText(socketAddress('::1', 1))).toBe('::1');
    expect(addressText(socketAddress('127.0.0.1', 1))).toBe('127.0.0.1');
  });

  it('takes from the container’s budget and the node’s, and gives back', () => {
    const node = makeFdBudget(2, 3);
    const a = new SocketBudget(node);
    const b = new SocketBudget(node);
    expect([a.take(), a.take(), a.take()]).toEqual([true, true, false]); // the container's 2
    expect([b.take(), b.take()]).toEqual([true, false]); // the node's 3
    a.give();
    expect(b.take()).toBe(true);
    expect(a.held).toBe(1);
  });
});

describe('wasi:sockets through jco and preview2-shim', () => {
  it('talks TCP to a server, to a ClusterIP (a ready endpoint) and to a Service name; no endpoint: connection-refused', async () => {
    expect(
      await run([
        `echo:127.0.0.1:${echoPort}:hello`,
        `echo:${VIP}:7:via the ClusterIP`,
        `echo:${GONE_VIP}:7:x`,
        'lookup:echo.ns.svc.cluster.local',
        'lookup:echo',
        'echo-name:echo.ns.svc.cluster.local:7:via the name',
        'lookup:nosuch.ns.svc.cluster.local',
        'lookup:localhost',
      ]),
    ).toEqual([
      `echo 127.0.0.1:${echoPort} -> hello`,
      `echo ${VIP}:7 -> via the ClusterIP`,
      `echo ${GONE_VIP}:7 -> error connection-refused`,
      `lookup echo.ns.svc.cluster.local -> ${VIP}`,
      `lookup echo -> ${VIP}`,
      'echo-name echo.ns.svc.cluster.local:7 -> via the name',
      'lookup nosuch.ns.svc.cluster.local -> error name-unresolvable',
      'lookup localhost -> 127.0.0.1',
    ]);
  });

  it('binds only on the pod IP (the unspecified address becomes it), at port 0 or a declared containerPort', async () => {
    const declared = await freePort();
    const other = await freePort();
    expect(
      await run(['bind:127.0.0.1:0', 'bind:0.0.0.0:0', `bind:0.0.0.0:${declared}`, 'bind:10.9.9.9:0', `bind:127.0.0.1:${other}`], {
        ports: [{ containerPort: declared, protocol: 'TCP' }],
      }),
    ).toEqual([
      'bind 127.0.0.1:0 -> ok',
      'bind 0.0.0.0:0 -> ok',
      `bind 0.0.0.0:${declared} -> ok`,
      'bind 10.9.9.9:0 -> error access-denied',
      `bind 127.0.0.1:${other} -> error access-denied`,
    ]);
  });

  it('sends and receives UDP datagrams (bound on the pod IP)', async () => {
    expect(await run([`udp:127.0.0.1:${udpPort}:ping`])).toEqual([`udp 127.0.0.1:${udpPort} -> echo ping`]);
  });

  it('sockets count against the container’s descriptor budget (new-socket-limit beyond it), and are given back when dropped', async () => {
    // The provider's budget is 16 descriptors a container.
    expect(await run(['hold:20', 'hold:16'])).toEqual(['hold 20 -> 16 sockets, then error new-socket-limit', 'hold 16 -> 16 sockets']);
  });
});

describe('the outbound allow-list (wasi.nodelet.dev/allowed-outbound-hosts)', () => {
  const allow = (...entries: string[]) => ({ ...pod, annotations: { [ALLOWED_OUTBOUND_HOSTS_ANNOTATION]: JSON.stringify(entries) } });

  it('a socket connect outside it fails with access-denied; a ClusterIP inside it reaches its endpoint', async () => {
    const s = spec(pulledFile(await buildComponent('sockets-client'), 'fixture:sockets-client'), tmp.dir, [
      `echo:127.0.0.1:${echoPort}:allowed`,
      `echo:127.0.0.1:${webPort}:denied`,
      `echo:${VIP}:7:allowed too`,
    ]);
    const c = await provider.startContainer({ ...s, pod: allow(`tcp://127.0.0.1:${echoPort}`, 'tcp://10.0.0.0/24:1..100'), network }, podContext());
    expect((await c.exit).exitCode).toBe(0);
    expect(logText(s.logPath).split('\n').slice(0, -1)).toEqual([
      `echo 127.0.0.1:${echoPort} -> allowed`,
      `echo 127.0.0.1:${webPort} -> error access-denied`,
      `echo ${VIP}:7 -> allowed too`,
    ]);
    expect(logText(s.logPath, 'stderr')).toContain(`nodelet: outbound tcp://127.0.0.1:${webPort} denied`);
  });

  it('a UDP datagram to a destination outside it fails with access-denied', async () => {
    const s = spec(pulledFile(await buildComponent('sockets-client'), 'fixture:sockets-client'), tmp.dir, [
      `udp:127.0.0.1:${udpPort}:allowed`,
      `udp:127.0.0.1:${echoPort}:denied`,
    ]);
    const c = await provider.startContainer({ ...s, pod: allow(`udp://127.0.0.1:${udpPort}`), network }, podContext());
    expect((await c.exit).exitCode).toBe(0);
    expect(logText(s.logPath).split('\n').slice(0, -1)).toEqual([
      `udp 127.0.0.1:${udpPort} -> echo allowed`,
      `udp 127.0.0.1:${echoPort} -> error access-denied`,
    ]);
  });

  it('an HTTP request outside it fails with HTTP-request-denied on the jco path; inside, it is sent', async () => {
    const s = spec(pulledFile(await buildComponent('http-get'), 'fixture:http-get'), tmp.dir, [
      `http://127.0.0.1:${webPort}/in`,
      `http://localhost:${webPort}/out`,
    ]);
    const c = await provider.startContainer({ ...s, pod: allow(`http://127.0.0.1:${webPort}`), network }, podContext());
    expect((await c.exit).exitCode).toBe(0);
    expect(logText(s.logPath).split('\n').slice(0, -1)).toEqual([
      `http://127.0.0.1:${webPort}/in -> 200 web saw /in`,
      `http://localhost:${webPort}/out -> error ErrorCode::HttpRequestDenied`,
    ]);
  });

  it('an HTTP request outside it fails with HTTP-request-denied on nodelet’s per-request host', async () => {
    const port = await freePort();
    const s = spec(pulledFile(await buildComponent('hello-http'), 'fixture:hello-http'), tmp.dir, [], {
      pod: allow(`http://*.cluster.local:${webPort}`, `http://127.0.0.1:${webPort}`),
      ports: [{ containerPort: port, protocol: 'TCP' }],
      network,
    });
    const c = await provider.startContainer(s, podContext());
    const get = async (path: string) => (await fetch(`http://127.0.0.1:${port}${path}`)).text();
    try {
      expect(await get(`/fetch/127.0.0.1:${webPort}/in`)).toBe('fetched 200: web saw /in\n');
      expect(await get(`/fetch/localhost:${webPort}/out`)).toBe('fetch failed: ErrorCode::HttpRequestDenied\n');
    } finally {
      await c.stop(0);
    }
    expect(logText(s.logPath, 'stderr')).toContain(`nodelet: outbound http://localhost:${webPort} denied`);
  });

  it('a malformed annotation fails the start with InvalidArgument naming the entry', async () => {
    const s = spec(pulledFile(await buildComponent('sockets-client'), 'fixture:sockets-client'), tmp.dir, []);
    const err = await provider.startContainer({ ...s, pod: allow('example.com') }, podContext()).catch((e: unknown) => e);
    expect(isInvalidArgument(err)).toBe(true);
    expect((err as Error).message).toMatch(/allowed-outbound-hosts.*"example\.com".*no scheme/);
  });
});

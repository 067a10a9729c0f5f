/**
 * Services on the provider's three outbound paths, in-process, with core's real resolver over a
 * hand-filled Service table (ProviderContext.services): a wasi:http component served by nodelet's
 * own host (hello-http's /fetch/), a wasi:cli component through jco's bindings and preview2-shim
 * (http-get), and a preview1 module's wasi_experimental_http (http-fetch). A ClusterIP or a
 * Service name reaches the endpoint (a local server); a Service without a ready endpoint fails
 * at once with connection-refused (REQUEST_ERROR for wasi_experimental_http).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceClient, ServiceResolver } from '@nodelet/plugin-api/v1';
import { WasiProvider } from '../src/index.ts';
import { ALLOWED_DOMAINS_ANNOTATION } from '../src/experimental-http-config.ts';
import { NodeServiceResolver } from '../../../core/services/service-resolver.ts';
import { ServiceTable } from '../../../core/services/service-table.ts';
import { ep, service, slice } from '../../../test/unit/services/fixtures.ts';
import { buildComponent } from '../../../test/harness/wasm-components.ts';
import { buildRustModule } from '../../../test/harness/rust-modules.ts';
import { freePort } from '../../../test/harness/ports.ts';
import { FakeImages, logText, podContext, providerContext, pulledFile, scratch, spec } from './helpers.ts';

const VIP = '10.0.0.10';
const GONE_VIP = '10.0.0.11';
let provider: WasiProvider;
let upstream: Server;
const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
const asked: { host: string; port: number; client: ServiceClient }[] = [];
const tmp = scratch();
const rootDir = join(tmp.dir, 'root');
let fetchModule: string;

beforeAll(async () => {
  mkdirSync(rootDir, { recursive: true });
  await buildComponent('hello-http'); // builds all test components (cargo, minutes when not cached)
  fetchModule = await buildRustModule('http-fetch');
  upstream = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    res.end(`upstream saw ${req.url}`);
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const upstreamPort = (upstream.address() as AddressInfo).port;
  // Service ns/web (port 80 → the upstream, one ready endpoint) and ns/gone (no endpoint).
  const table = new ServiceTable('n1');
  table.servicesSynced = true;
  table.slicesSynced = true;
  table.upsertService(service('ns', 'web', { clusterIP: VIP }));
  table.upsertSlice(slice('ns', 'web', 'web-1', [ep('127.0.0.1')], [{ name: '', port: upstreamPort }]));
  table.upsertService(service('ns', 'gone', { clusterIP: GONE_VIP }));
  const resolver = new NodeServiceResolver({ table, clusterDomain: 'cluster.local', topology: { nodeName: 'n1' }, podDns: () => undefined });
  const services: ServiceResolver = {
    resolve: (...a) => resolver.resolve(...a),
    lookup: (...a) => resolver.lookup(...a),
    route: (host, port, client, protocol) => {
      asked.push({ host, port, client });
      return resolver.route(host, port, client, protocol);
    },
  };
  provider = new WasiProvider(); // in-process: the modules run in this test process
  await provider.init({ ...providerContext(new FakeImages(), rootDir), services });
}, 600_000);
afterAll(async () => {
  await provider?.shutdown();
  upstream?.close();
  tmp.cleanup();
});

const pod = { namespace: 'ns', name: 'client', uid: 'uid-client' };

describe('a wasi:http component served by nodelet’s host (outgoing-handler)', () => {
  it('reaches a Service by name and by ClusterIP, keeping the name as Host; no ready endpoint: ConnectionRefused', async () => {
    const port = await freePort();
    const s = spec(pulledFile(await buildComponent('hello-http'), 'fixture:hello-http'), tmp.dir, [], {
      pod,
      ports: [{ containerPort: port, protocol: 'TCP' }],
      network: { podIPs: ['127.0.0.1'], hostNetwork: false },
    });
    const c = await provider.startContainer(s, podContext());
    const get = async (path: string) => (await fetch(`http://127.0.0.1:${port}${path}`)).text();
    try {
      expect(await get('/fetch/web.ns.svc.cluster.local/by-name')).toBe('fetched 200: upstream saw /by-name\n');
      expect(seen.at(-1)!.headers.host).toBe('web.ns.svc.cluster.local');
      expect(await get('/fetch/web/short')).toBe('fetched 200: upstream saw /short\n');
      expect(await get(`/fetch/${VIP}:80/by-ip`)).toBe('fetched 200: upstream saw /by-ip\n');
      expect(seen.at(-1)!.headers.host).toBe(`${VIP}:80`);
      expect(await get(`/fetch/${GONE_VIP}:80/x`)).toBe('fetch failed: ErrorCode::ConnectionRefused\n');
      expect(await get('/fetch/gone.ns/x')).toBe('fetch failed: ErrorCode::ConnectionRefused\n');
      expect(await get('/fetch/nosuch.ns.svc.cluster.local/x')).toMatch(/^fetch failed: ErrorCode::DnsError/);
      // The pod and its IP went with the question (the search path, session affinity).
      expect(asked.at(-1)).toEqual({ host: 'nosuch.ns.svc.cluster.local', port: 80, client: { pod, ip: '127.0.0.1' } });
    } finally {
      await c.stop(0);
    }
  });
});

describe('a wasi:cli component through jco and preview2-shim (outgoing-handler)', () => {
  it('reaches a Service by name and by ClusterIP; no ready endpoint: ConnectionRefused', async () => {
    const s = spec(
      pulledFile(await buildComponent('http-get'), 'fixture:http-get'),
      tmp.dir,
      ['http://web.ns.svc.cluster.local/by-name', `http://${VIP}/by-ip`, `http://${GONE_VIP}/x`],
      { pod, network: { podIPs: ['127.0.0.1'], hostNetwork: false } },
    );
    const c = await provider.startContainer(s, podContext());
    expect((await c.exit).exitCode).toBe(0);
    expect(logText(s.logPath).split('\n')).toEqual([
      'http://web.ns.svc.cluster.local/by-name -> 200 upstream saw /by-name',
      `http://${VIP}/by-ip -> 200 upstream saw /by-ip`,
      `http://${GONE_VIP}/x -> error ErrorCode::ConnectionRefused`,
      '',
    ]);
  });
});

describe('a preview1 module’s wasi_experimental_http', () => {
  it('reaches a Service by name, keeping the name as Host; no ready endpoint: REQUEST_ERROR', async () => {
    const run = async (url: string) => {
      const s = spec(pulledFile(fetchModule, 'http-fetch'), tmp.dir, [url], {
        pod: { ...pod, annotations: { [ALLOWED_DOMAINS_ANNOTATION]: '["insecure:allow-all"]' } },
        network: { podIPs: ['127.0.0.1'], hostNetwork: false },
      });
      const c = await provider.startContainer(s, podContext());
      await c.exit;
      return logText(s.logPath);
    };
    expect(await run('http://web.ns.svc.cluster.local/p1')).toContain('body upstream saw /p1\n');
    expect(seen.at(-1)!.headers.host).toBe('web.ns.svc.cluster.local');
    // The crate displays a host error by its code: 11 is REQUEST_ERROR.
    expect(await run(`http://${GONE_VIP}/p1`)).toBe('error Wasi error 11\n');
  });
});

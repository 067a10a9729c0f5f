import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isInvalidArgument } from '@nodelet/plugin-api/v1';
import { WasiProvider } from '../src/index.ts';
import { ALLOWED_OUTBOUND_HOSTS_ANNOTATION } from '../src/outbound-hosts.mjs';
import { ALLOWED_DOMAINS_ANNOTATION, experimentalHttpConfig, MAX_CONCURRENT_REQUESTS_ANNOTATION } from '../src/experimental-http-config.ts';
import { buildRustModule } from '../../../test/harness/rust-modules.ts';
import { FakeImages, logText, podContext, providerContext, pulledFile, scratch, spec } from './helpers.ts';

let provider: WasiProvider;
let server: Server;
let base: string;
const seen: IncomingMessage[] = [];
const tmp = scratch();
let module: string;

beforeAll(async () => {
  module = await buildRustModule('http-fetch');
  provider = new WasiProvider(); // in-process: the modules run in this test process
  await provider.init(providerContext(new FakeImages()));
  server = createServer((req, res) => {
    seen.push(req);
    res.setHeader('content-type', 'text/plain; charset=utf-8');
    res.end(`hello ${req.url}`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 600_000);
afterAll(async () => {
  await provider?.shutdown();
  server?.close();
  tmp.cleanup();
});

async function fetchWith(url: string, annotations?: Record<string, string>) {
  const s = spec(pulledFile(module, 'http-fetch'), tmp.dir, [url], { pod: { namespace: 'default', name: 'p', uid: 'u', annotations } });
  const c = await provider.startContainer(s, podContext());
  return { exit: await c.exit, out: logText(s.logPath) };
}

describe('wasi_experimental_http (Krustlet)', () => {
  it('fetches from an allowed host: status, headers and body reach the module', async () => {
    const before = seen.length;
    const { exit, out } = await fetchWith(`${base}/allowed`, { [ALLOWED_DOMAINS_ANNOTATION]: JSON.stringify([base]) });
    expect(out).toContain('status 200 OK\n');
    expect(out).toContain('content-type text/plain; charset=utf-8\n');
    expect(out).toMatch(/headers \d+\n/);
    expect(out).toContain('body hello /allowed\n');
    expect(exit).toMatchObject({ exitCode: 0 });
    expect(seen.length).toBe(before + 1);
    expect(seen.at(-1)!.headers['x-fetched-by']).toBe('http-fetch');
  });

  // The crate displays a host error by its code: 7 is DESTINATION_NOT_ALLOWED, 13 TOO_MANY_SESSIONS, 11 REQUEST_ERROR.
  it('refuses a host not listed: the library reports DESTINATION_NOT_ALLOWED and nothing is sent', async () => {
    const before = seen.length;
    const { exit, out } = await fetchWith(`${base}/refused`, { [ALLOWED_DOMAINS_ANNOTATION]: '["https://example.com"]' });
    expect(out).toBe('error Wasi error 7\n');
    expect(exit).toMatchObject({ exitCode: 1 });
    expect(seen.length).toBe(before);
  });

  it('allows nothing without the annotation, everything with insecure:allow-all', async () => {
    const before = seen.length;
    expect((await fetchWith(`${base}/none`)).out).toBe('error Wasi error 7\n');
    expect(seen.length).toBe(before);
    expect((await fetchWith(`${base}/all`, { [ALLOWED_DOMAINS_ANNOTATION]: '["insecure:allow-all"]' })).out).toContain('body hello /all\n');
  });

  it('the pod’s wasi.nodelet.dev/allowed-outbound-hosts applies too: a request must be allowed by both lists', async () => {
    const before = seen.length;
    const port = new URL(base).port;
    const both = (outbound: string) => ({ [ALLOWED_DOMAINS_ANNOTATION]: '["insecure:allow-all"]', [ALLOWED_OUTBOUND_HOSTS_ANNOTATION]: outbound });
    expect((await fetchWith(`${base}/spin-allowed`, both(`http://127.0.0.1:${port}`))).out).toContain('body hello /spin-allowed\n');
    expect((await fetchWith(`${base}/spin-refused`, both('http://127.0.0.1:1..100'))).out).toBe('error Wasi error 7\n');
    expect(seen.map((r) => r.url).slice(before)).toEqual(['/spin-allowed']);
  });

  it('answers TOO_MANY_SESSIONS beyond max-concurrent-requests', async () => {
    const { out } = await fetchWith(`${base}/max`, { [ALLOWED_DOMAINS_ANNOTATION]: JSON.stringify([base]), [MAX_CONCURRENT_REQUESTS_ANNOTATION]: '0' });
    expect(out).toBe('error Wasi error 13\n');
  });

  it('reports a request that fails as REQUEST_ERROR', async () => {
    const { out } = await fetchWith('http://127.0.0.1:1/', { [ALLOWED_DOMAINS_ANNOTATION]: '["http://127.0.0.1"]' });
    expect(out).toBe('error Wasi error 11\n');
  });

  it('fails the start on an annotation that does not parse, as Krustlet did', async () => {
    const s = spec(pulledFile(module, 'http-fetch'), tmp.dir, [base], {
      pod: { namespace: 'default', name: 'p', uid: 'u', annotations: { [ALLOWED_DOMAINS_ANNOTATION]: 'example.com' } },
    });
    const err = await provider.startContainer(s, podContext()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isInvalidArgument(err)).toBe(true);
    expect((err as Error).message).toContain(`error parsing annotation "${ALLOWED_DOMAINS_ANNOTATION}"`);
  });
});

describe('experimentalHttpConfig (the pod annotations, as Krustlet parsed them)', () => {
  const config = (annotations?: Record<string, string>) => experimentalHttpConfig({ name: 'main', pod: { namespace: 'd', name: 'p', uid: 'u', annotations } });
  it('allows nothing and sets no limit without annotations', () => {
    expect(config()).toEqual({ allowedHosts: null, maxConcurrentRequests: undefined });
  });
  it('takes a JSON list of strings and an unsigned integer', () => {
    expect(config({ [ALLOWED_DOMAINS_ANNOTATION]: '["https://a.example", "insecure:allow-all"]', [MAX_CONCURRENT_REQUESTS_ANNOTATION]: '42' })).toEqual({
      allowedHosts: ['https://a.example', 'insecure:allow-all'],
      maxConcurrentRequests: 42,
    });
  });
  it.each([
    [ALLOWED_DOMAINS_ANNOTATION, '{"a": 1}'],
    [ALLOWED_DOMAINS_ANNOTATION, '[1]'],
    [MAX_CONCURRENT_REQUESTS_ANNOTATION, '-1'],
    [MAX_CONCURRENT_REQUESTS_ANNOTATION, 'ten'],
    [MAX_CONCURRENT_REQUESTS_ANNOTATION, '4294967296'],
  ])('refuses %s = %s', (key, value) => {
    expect(() => config({ [key]: value })).toThrow(`error parsing annotation "${key}"`);
  });
});

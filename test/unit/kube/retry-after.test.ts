/**
 * The apiserver's Retry-After (core/kube/retry-after.ts and its use in api-transport.ts), against
 * a small fake apiserver over plain HTTP: which answers are waited out and sent again, how long,
 * how often, within a timeout, and that a throttled client sends one request at a time.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiTransport } from '../../../core/kube/api-transport.ts';
import { KubeConfig } from '../../../core/kube/kubeconfig.ts';
import { MAX_RETRIES, MAX_RETRY_AFTER_MS, retryAfterMs } from '../../../core/kube/retry-after.ts';

/** One request the fake apiserver saw: when it came and when it was answered. */
interface Seen {
  url: string;
  at: number;
  answeredAt?: number;
}
/** The answer to a request: status, headers, and a delay before it. */
type Answer = { status: number; headers?: Record<string, string>; delayMs?: number };

const dir = mkdtempSync(join(tmpdir(), 'retry-after-'));
let server: http.Server;
let base = '';
const seen: Seen[] = [];
let answer: (s: Seen) => Answer = () => ({ status: 200 });

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const s: Seen = { url: req.url!, at: Date.now() };
      seen.push(s);
      const a = answer(s);
      setTimeout(() => {
        s.answeredAt = Date.now();
        const body = a.status === 200 ? JSON.stringify({ ok: s.url }) : JSON.stringify({ kind: 'Status', code: a.status, message: `refused ${a.status}` });
        res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers });
        res.end(body);
      }, a.delayMs ?? 0);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  seen.length = 0;
  answer = () => ({ status: 200 });
});

function transport(): ApiTransport {
  const file = join(dir, `kc-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: c, cluster: {server: "${base}"}}]`,
      'users: [{name: u, user: {token: t}}]',
      'contexts: [{name: x, context: {cluster: c, user: u}}]',
      'current-context: x',
      '',
    ].join('\n'),
  );
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  return new ApiTransport(kc);
}

const refuse = (status: number, retryAfter?: string): Answer => ({ status, headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter } });

describe('retryAfterMs (client-go checkWait)', () => {
  it('honours whole seconds on 429 and 5xx, capped; nothing else', () => {
    expect(retryAfterMs(429, '1')).toBe(1000);
    expect(retryAfterMs(503, '2')).toBe(2000);
    expect(retryAfterMs(500, '0')).toBe(0);
    expect(retryAfterMs(429, ['3'])).toBe(3000);
    expect(retryAfterMs(429, '3600')).toBe(MAX_RETRY_AFTER_MS);
    expect(retryAfterMs(429, undefined)).toBeUndefined();
    expect(retryAfterMs(503, 'Wed, 21 Oct 2037 07:28:00 GMT')).toBeUndefined();
    expect(retryAfterMs(409, '1')).toBeUndefined();
    expect(retryAfterMs(200, '1')).toBeUndefined();
  });
});

describe('ApiTransport and Retry-After', () => {
  it('sends a request refused with 429 + Retry-After: 1 again after 1 s and resolves to the answer', async () => {
    answer = () => (seen.length === 1 ? refuse(429, '1') : { status: 200 });
    const t = transport();
    await expect(t.request('GET', '/api/v1/nodes/n1')).resolves.toEqual({ ok: '/api/v1/nodes/n1' });
    expect(seen).toHaveLength(2);
    expect(seen[1]!.at - seen[0]!.answeredAt!).toBeGreaterThanOrEqual(995);
    expect(t.throttled).toBe(false);
    await t.close();
  });

  it(`gives up after ${MAX_RETRIES} retries with the last refusal`, async () => {
    answer = () => refuse(503, '0');
    const t = transport();
    await expect(t.request('PATCH', '/api/v1/namespaces/a/pods/p/status', { body: {} })).rejects.toMatchObject({ httpStatus: 503 });
    expect(seen).toHaveLength(MAX_RETRIES + 1);
    expect(t.throttled).toBe(true);
    await t.close();
  });

  it('does not retry a refusal without Retry-After, nor a 4xx other than 429 with one', async () => {
    const t = transport();
    answer = () => refuse(503);
    await expect(t.request('GET', '/a')).rejects.toMatchObject({ httpStatus: 503 });
    answer = () => refuse(409, '0');
    await expect(t.request('GET', '/b')).rejects.toMatchObject({ httpStatus: 409 });
    expect(seen.map((s) => s.url)).toEqual(['/a', '/b']);
    await t.close();
  });

  it('while throttled sends one request at a time, each after the last Retry-After; the first answer without one ends it', async () => {
    const start = Date.now();
    // Every request is refused during the first 2.5 s; answers take 50 ms, so overlapping requests would show.
    answer = () => (Date.now() - start < 2500 ? { ...refuse(429, '1'), delayMs: 50 } : { status: 200, delayMs: 50 });
    const t = transport();
    const paths = Array.from({ length: 5 }, (_, i) => `/api/v1/namespaces/a/pods/p${i}/status`);
    const answers = await Promise.all(paths.map((p) => t.request<{ ok: string }>('PATCH', p, { body: {} })));
    expect(answers.map((a) => a.ok)).toEqual(paths);
    // The first 5 went at once (nothing was known yet); after them, none overlapped another.
    const later = seen.slice(5);
    for (let i = 1; i < later.length; i++) expect(later[i]!.at).toBeGreaterThanOrEqual(later[i - 1]!.answeredAt!);
    // While refused, each came at least Retry-After after the refusal before it.
    const refusedLater = later.filter((s) => s.at - start < 2500);
    expect(refusedLater.length).toBeGreaterThanOrEqual(1);
    for (const s of [...refusedLater, later[refusedLater.length]!]) {
      const lastRefusal = Math.max(...seen.filter((x) => x.answeredAt! <= s.at && x.answeredAt! - start < 2550).map((x) => x.answeredAt!));
      expect(s.at - lastRefusal).toBeGreaterThanOrEqual(995);
    }
    // About one request per second while refused, not one per second per request.
    expect(seen.filter((s) => s.at - start >= 100 && s.at - start < 2500).length).toBeLessThanOrEqual(3);
    expect(t.throttled).toBe(false);
    await t.close();
  }, 15_000);

  it('a request with a timeout gives up at its timeout, waiting for Retry-After included', async () => {
    answer = () => refuse(429, '1');
    const t = transport().withTimeout(1500);
    const began = Date.now();
    await expect(t.request('PUT', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1', { body: {} })).rejects.toMatchObject({
      httpStatus: 429,
    });
    const took = Date.now() - began;
    expect(took).toBeGreaterThanOrEqual(1450);
    expect(took).toBeLessThan(2500);
    expect(seen).toHaveLength(2); // at 0 and 1 s; the next would be after the timeout
    await t.close();
  });

  it('a refusal holds the requests of the transport made with withTimeout too (one client)', async () => {
    answer = () => (seen.length === 1 ? refuse(429, '1') : { status: 200 });
    const t = transport();
    const heartbeat = t.withTimeout(5000);
    const a = t.request('GET', '/a'); // refused, sent again after 1 s
    await new Promise((r) => setTimeout(r, 100));
    expect(t.throttled).toBe(true);
    await heartbeat.request('GET', '/b');
    await a;
    const b = seen.find((s) => s.url === '/b')!;
    expect(b.at - seen[0]!.answeredAt!).toBeGreaterThanOrEqual(995);
    await t.close();
  });

  it('a watch refused with Retry-After holds the next watch (and requests) until it ran out', async () => {
    answer = () => (seen.length === 1 ? refuse(429, '1') : { status: 200 });
    const t = transport();
    const ended = new Promise<unknown>((resolve) => void t.watch('/w1', {}, () => undefined, resolve));
    expect(await ended).toMatchObject({ httpStatus: 429 });
    expect(t.throttled).toBe(true);
    // the owner starts the watch again at once: it is sent only after the Retry-After
    const again = new Promise<unknown>((resolve) => void t.watch('/w2', {}, () => undefined, resolve));
    await again;
    const w2 = seen.find((s) => s.url.startsWith('/w2'))!;
    expect(w2.at - seen[0]!.answeredAt!).toBeGreaterThanOrEqual(995);
    expect(t.throttled).toBe(false); // an answer without Retry-After ends the throttling
    await t.close();
  });
});

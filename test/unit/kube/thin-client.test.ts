/**
 * nodelet's own API client (core/kube: kubeconfig.ts, api-transport.ts, api-groups.ts,
 * list-watch.ts) against a small fake apiserver over plain HTTP: what goes on the wire,
 * how answers and failures come back, the request counter, watches and the informer.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { apiMessage, createKubeClients, isApiConflict, isApiNotFound, strategicMergePatch } from '../../../core/kube/client.ts';
import { ApiTransport } from '../../../core/kube/api-transport.ts';
import { KubeConfig } from '../../../core/kube/kubeconfig.ts';
import { LIST_WATCH_IDLE_TIMEOUT_MS, ListWatch, watchTimeoutSeconds } from '../../../core/kube/list-watch.ts';
import { MicroTime } from '../../../core/kube/micro-time.ts';
import { restClientRequests } from '../../../core/metrics/index.ts';
import { isNodeletError } from '../../../core/errors/catalogue.ts';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
type Handler = (req: Seen, res: http.ServerResponse) => void;

const dir = mkdtempSync(join(tmpdir(), 'thin-client-'));
let server: http.Server;
let base = '';
const seen: Seen[] = [];
let handler: Handler = (_r, res) => res.end('{}');

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const s = { method: req.method!, url: req.url!, headers: req.headers, body };
      seen.push(s);
      res.setHeader('content-type', 'application/json');
      handler(s, res);
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
});

function kubeconfig(user: string, server = base): string {
  const file = join(dir, `kc-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: c, cluster: {server: "${server}/"}}]`,
      `users: [{name: u, user: ${user}}]`,
      'contexts: [{name: x, context: {cluster: c, user: u}}]',
      'current-context: x',
      '',
    ].join('\n'),
  );
  return file;
}

describe('KubeConfig', () => {
  it('reads the current cluster and user, resolving relative files against the kubeconfig directory', () => {
    mkdirSync(join(dir, 'pki'), { recursive: true });
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig('{client-certificate: pki/c.pem, client-key: /abs/k.pem, token: t}'));
    expect(kc.getCurrentCluster()).toMatchObject({ name: 'c', server: base, skipTLSVerify: false });
    expect(kc.getCurrentUser()).toMatchObject({ name: 'u', certFile: join(dir, 'pki', 'c.pem'), keyFile: '/abs/k.pem', token: 't' });
  });

  it('reads every scalar as its text, as client-go does: a token that looks like a number stays the token', () => {
    const file = join(dir, 'numeric.yaml');
    writeFileSync(
      file,
      [
        'clusters: [{name: 1234, cluster: {server: "https://10.0.0.1:6443", insecure-skip-tls-verify: true}}]',
        'users: [{name: 5678, user: {token: 123456.0000000000000000}}]',
        'contexts: [{name: 9, context: {cluster: 1234, user: 5678}}]',
        'current-context: 9',
        '',
      ].join('\n'),
    );
    const kc = new KubeConfig();
    kc.loadFromFile(file);
    expect(kc.getCurrentCluster()).toMatchObject({ name: '1234', server: 'https://10.0.0.1:6443', skipTLSVerify: true });
    expect(kc.getCurrentUser()).toMatchObject({ name: '5678', token: '123456.0000000000000000' });
    const json = join(dir, 'kubeconfig.json');
    writeFileSync(
      json,
      JSON.stringify({
        clusters: [{ name: 'c', cluster: { server: 'https://h', 'insecure-skip-tls-verify': false } }],
        users: [{ name: 'u', user: { token: 't' } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      }),
    );
    kc.loadFromFile(json);
    expect(kc.getCurrentCluster()).toMatchObject({ server: 'https://h', skipTLSVerify: false });
    expect(kc.getCurrentUser()).toMatchObject({ token: 't' });
  });

  it('refuses a kubeconfig without a server, and an exec user at the first request', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'clusters: [{name: c, cluster: {}}]\n');
    expect(() => new KubeConfig().loadFromFile(bad)).toThrow(/cluster c has no server/);
    const c = createKubeClients(kubeconfig('{exec: {command: gcloud}}'));
    await expect(c.core.readNode({ name: 'n' })).rejects.toThrow(/exec plugin/);
  });
});

describe('API requests', () => {
  it('send the method, path, query, body and patch type of each call, with the bearer token', async () => {
    handler = (_r, res) => res.end(JSON.stringify({ kind: 'Pod', metadata: { name: 'p' } }));
    const c = createKubeClients(kubeconfig('{token: s3cret}'));
    expect(await c.core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=n1' })).toMatchObject({ metadata: { name: 'p' } });
    // The pod a status PATCH answers with is not parsed: nothing reads it.
    expect(
      await c.core.patchNamespacedPodStatus({ name: 'p', namespace: 'ns 1', body: { status: { phase: 'Running' } } }, strategicMergePatch),
    ).toBeUndefined();
    await c.core.deleteNamespacedPod({ name: 'p', namespace: 'ns', gracePeriodSeconds: 0, body: { preconditions: { uid: 'u1' } } });
    await c.coordination.replaceNamespacedLease({ name: 'n1', namespace: 'kube-node-lease', body: { spec: { renewTime: new MicroTime(0) } } });
    expect(seen.map((s) => [s.method, s.url])).toEqual([
      ['GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dn1'],
      ['PATCH', '/api/v1/namespaces/ns%201/pods/p/status'],
      ['DELETE', '/api/v1/namespaces/ns/pods/p?gracePeriodSeconds=0'],
      ['PUT', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1'],
    ]);
    expect(seen.every((s) => s.headers.authorization === 'Bearer s3cret')).toBe(true);
    expect(seen[1]!.headers['content-type']).toBe('application/strategic-merge-patch+json');
    expect(JSON.parse(seen[1]!.body)).toEqual({ status: { phase: 'Running' } });
    expect(JSON.parse(seen[2]!.body)).toEqual({ preconditions: { uid: 'u1' } });
    expect(seen[0]!.body).toBe('');
    expect(JSON.parse(seen[3]!.body)).toEqual({ spec: { renewTime: '1970-01-01T00:00:00.000000Z' } });
  });

  it("turn a non-2xx answer into NDL_API_REQUEST with the HTTP status and the Status's message", async () => {
    handler = (r, res) => {
      res.statusCode = r.method === 'POST' ? 409 : 404;
      res.end(JSON.stringify({ kind: 'Status', message: `nodes "n1" ${r.method === 'POST' ? 'already exists' : 'not found'}` }));
    };
    const c = createKubeClients(kubeconfig('{token: t}'));
    const notFound = await c.core.readNode({ name: 'n1' }).catch((e: unknown) => e);
    expect(isNodeletError(notFound) && notFound.code).toBe('NDL_API_REQUEST');
    expect(isApiNotFound(notFound)).toBe(true);
    expect(apiMessage(notFound)).toBe('nodes "n1" not found');
    const conflict = await c.core.createNode({ body: { metadata: { name: 'n1' } } }).catch((e: unknown) => e);
    expect(isApiConflict(conflict)).toBe(true);
    // A call whose answer is not parsed still fails on a refusal.
    const gone = await c.core.patchNamespacedPodStatus({ name: 'p', namespace: 'ns', body: {} }).catch((e: unknown) => e);
    expect(isApiNotFound(gone)).toBe(true);
  });

  it('fail with NDL_API_REQUEST and no HTTP status when nothing answers', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const c = createKubeClients(kubeconfig('{token: t}', `http://127.0.0.1:${port}`));
    const e = await c.core.readNode({ name: 'n1' }).catch((x: unknown) => x);
    expect(isNodeletError(e) && e.code).toBe('NDL_API_REQUEST');
    expect((e as { httpStatus?: number }).httpStatus).toBeUndefined();
  });

  it('read an answer that comes in several chunks; an answer cut off after its status fails with NDL_API_REQUEST, counted under that status', async () => {
    const big = { metadata: { name: 'n1' }, status: { note: 'x'.repeat(200_000) } };
    handler = (r, res) => {
      const text = JSON.stringify(big);
      if (r.url.includes('cut')) {
        res.setHeader('content-length', String(text.length));
        res.write(text.slice(0, 1000));
        setImmediate(() => res.destroy());
        return;
      }
      res.write(text.slice(0, 70_000));
      setImmediate(() => res.end(text.slice(70_000)));
    };
    const c = createKubeClients(kubeconfig('{token: t}'));
    expect(await c.core.readNode({ name: 'n1' })).toEqual(big);
    const host = new URL(base).host;
    const counted = async () =>
      (await restClientRequests.get()).values.find((v) => v.labels.code === '200' && v.labels.host === host && v.labels.method === 'GET')?.value ?? 0;
    const before = await counted();
    const e = await c.core.readNode({ name: 'cut' }).catch((x: unknown) => x);
    expect(isNodeletError(e) && e.code).toBe('NDL_API_REQUEST');
    expect((e as Error).message).toMatch(/^API server request failed: GET \/api\/v1\/nodes\/cut: /);
    expect((await counted()) - before).toBe(1);
  });

  it("go through the cluster's proxy-url, requests and watches alike", async () => {
    const tunnels: string[] = [];
    // The apiserver here is http://, so undici's ProxyAgent sends absolute-form requests: forwarded.
    const proxy = http.createServer((req, res) => {
      const target = new URL(req.url!);
      tunnels.push(target.host);
      const up = http.request(target, { method: req.method, headers: req.headers }, (ur) => {
        res.writeHead(ur.statusCode!, ur.headers);
        ur.pipe(res);
      });
      up.on('error', () => res.destroy());
      req.pipe(up);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      handler = (r, res) => {
        if (r.url.includes('watch=true')) return streamEvents(res, [{ type: 'ADDED', object: { metadata: { name: 'a' } } }]);
        res.end(JSON.stringify({ metadata: { name: 'n1' } }));
      };
      const file = kubeconfig('{token: t}');
      writeFileSync(
        file,
        readFileSync(file, 'utf8').replace('cluster: {server:', `cluster: {proxy-url: "http://127.0.0.1:${(proxy.address() as AddressInfo).port}", server:`),
      );
      const kc = new KubeConfig();
      kc.loadFromFile(file);
      const t = new ApiTransport(kc);
      expect(await t.request('GET', '/api/v1/nodes/n1')).toEqual({ metadata: { name: 'n1' } });
      const events: string[] = [];
      const ended = new Promise(
        (r) => void t.watch('/api/v1/pods', {}, (type, o) => events.push(`${type} ${(o as { metadata: { name: string } }).metadata.name}`), r),
      );
      expect(await ended).toBeNull();
      expect(events).toEqual(['ADDED a']);
      expect(tunnels.length).toBeGreaterThan(0);
      expect(new Set(tunnels)).toEqual(new Set([new URL(base).host]));
      await t.close();
    } finally {
      proxy.closeAllConnections();
      await new Promise((r) => proxy.close(r));
    }
  });

  it('are counted in rest_client_requests_total by code, host and method', async () => {
    handler = (r, res) => {
      res.statusCode = r.url.includes('missing') ? 404 : 200;
      res.end('{}');
    };
    const host = new URL(base).host;
    const value = async (code: string, method: string) =>
      (await restClientRequests.get()).values.find((v) => v.labels.code === code && v.labels.host === host && v.labels.method === method)?.value ?? 0;
    const [ok0, nf0] = [await value('200', 'GET'), await value('404', 'GET')];
    const c = createKubeClients(kubeconfig('{token: t}'));
    await c.core.readNode({ name: 'n1' });
    await c.core.readNode({ name: 'n2' });
    await c.core.readNode({ name: 'missing' }).catch(() => undefined);
    expect([(await value('200', 'GET')) - ok0, (await value('404', 'GET')) - nf0]).toEqual([2, 1]);
  });
});

describe('A transport with a timeout (the heartbeat clients)', () => {
  it('gives up a request the apiserver does not answer, closes its connection, and the next request answers on a new one', async () => {
    const closed: string[] = [];
    const stuck: http.ServerResponse[] = [];
    handler = (r, res) => {
      res.socket!.once('close', () => closed.push(r.url));
      if (r.url.includes('stuck')) return void stuck.push(res); // never answered
      res.end(JSON.stringify({ metadata: { name: 'n1' } }));
    };
    const host = new URL(base).host;
    const errors = async () =>
      (await restClientRequests.get()).values.find((v) => v.labels.code === '<error>' && v.labels.host === host && v.labels.method === 'PUT')?.value ?? 0;
    const errors0 = await errors();
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig('{token: t}'));
    const plain = new ApiTransport(kc);
    const timed = plain.withTimeout(300);
    expect([plain.timeoutMs, timed.timeoutMs]).toEqual([undefined, 300]);
    const t0 = Date.now();
    const e = await timed.request('PUT', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/stuck', { body: {} }).catch((x: unknown) => x);
    const waited = Date.now() - t0;
    expect(isNodeletError(e) && e.code).toBe('NDL_API_REQUEST');
    expect((e as Error).message).toBe(
      'API server request failed: PUT /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/stuck: no answer within 300 ms; the request was cancelled',
    );
    expect(waited).toBeGreaterThanOrEqual(295);
    expect((await errors()) - errors0).toBe(1);
    // The connection that stopped answering is closed, not kept for the next request.
    await expect.poll(() => closed).toEqual(['/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/stuck']);
    expect(await timed.request('GET', '/api/v1/nodes/n1')).toEqual({ metadata: { name: 'n1' } });
    // Both transports use the same connections; the one without a timeout waits.
    expect([plain.poolCount, timed.poolCount]).toEqual([1, 1]);
    const slow = plain.request('GET', '/api/v1/nodes/stuck-too');
    await new Promise((r) => setTimeout(r, 400)); // a fixed wait, past the other transport's timeout: this one must not time out
    expect(stuck).toHaveLength(2);
    stuck[1]!.end(JSON.stringify({ metadata: { name: 'late' } }));
    expect(await slow).toEqual({ metadata: { name: 'late' } });
    await plain.close();
  });
});

/** A watch answer streamed in uneven chunks, with a line that is not JSON. */
function streamEvents(res: http.ServerResponse, events: object[]): void {
  const text = events.map((e) => JSON.stringify(e)).join('\nnot json\n') + '\n';
  const cut = Math.floor(text.length / 3);
  res.write(text.slice(0, cut));
  setImmediate(() => res.end(text.slice(cut)));
}

describe('watches', () => {
  it('deliver events split across chunks, skip lines that are not JSON, and end with done(null)', async () => {
    handler = (_r, res) =>
      streamEvents(res, [
        { type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '1' } } },
        { type: 'MODIFIED', object: { metadata: { name: 'a', resourceVersion: '2' } } },
      ]);
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig('{token: t}'));
    const t = new ApiTransport(kc);
    const got: string[] = [];
    const err = await new Promise((resolve) => {
      void t.watch(
        '/api/v1/pods',
        { fieldSelector: 'x=y' },
        (type, o) => got.push(`${type} ${(o as { metadata: { resourceVersion: string } }).metadata.resourceVersion}`),
        resolve,
      );
    });
    expect(err).toBeNull();
    expect(got).toEqual(['ADDED 1', 'MODIFIED 2']);
    expect(seen[0]!.url).toBe('/api/v1/pods?fieldSelector=x%3Dy&watch=true');
  });

  it('end with the HTTP status on a refused watch, and with a TimeoutError when the stream stays silent', async () => {
    handler = (r, res) => {
      if (r.url.includes('gone')) {
        res.statusCode = 410;
        res.end(JSON.stringify({ kind: 'Status', message: 'too old resource version' }));
      } else res.write(''); // headers only, then silence
    };
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig('{token: t}'));
    const t = new ApiTransport(kc);
    const gone = await new Promise<unknown>((resolve) => void t.watch('/gone', {}, () => undefined, resolve));
    expect((gone as { httpStatus?: number }).httpStatus).toBe(410);
    const silent = await new Promise<unknown>((resolve) => void t.watch('/silent', {}, () => undefined, resolve, 100));
    expect((silent as Error).name).toBe('TimeoutError');
    await t.close();
  });
});

describe('ListWatch', () => {
  it('lists, then watches from the list resourceVersion; relists after 410 Gone, deleting what disappeared', async () => {
    let lists = 0;
    let watches = 0;
    handler = (r, res) => {
      if (!r.url.includes('watch=true')) {
        lists++;
        const items =
          lists === 1
            ? [{ metadata: { name: 'a', resourceVersion: '1' } }, { metadata: { name: 'b', resourceVersion: '1' } }]
            : [{ metadata: { name: 'a', resourceVersion: '5' } }];
        res.end(JSON.stringify({ items, metadata: { resourceVersion: lists === 1 ? '3' : '6' } }));
        return;
      }
      watches++;
      if (watches === 1) streamEvents(res, [{ type: 'MODIFIED', object: { metadata: { name: 'b', resourceVersion: '4' } } }]);
      else if (watches === 2) streamEvents(res, [{ type: 'ERROR', object: { kind: 'Status', code: 410 } }]);
      else res.flushHeaders(); // the third watch stays open
    };
    const c = createKubeClients(kubeconfig('{token: t}'));
    const events: string[] = [];
    const lw = new ListWatch<{ metadata: { name: string; resourceVersion: string } }>(
      c.transport,
      '/api/v1/pods',
      () => c.core.listPodForAllNamespaces() as never,
      {
        fieldSelector: 'spec.nodeName=n1',
      },
    );
    lw.on('add', (o) => events.push(`add ${o.metadata.name}`));
    lw.on('update', (o) => events.push(`update ${o.metadata.name}@${o.metadata.resourceVersion}`));
    lw.on('delete', (o) => events.push(`delete ${o.metadata.name}`));
    await lw.start();
    await expect.poll(() => watches, { timeout: 10_000 }).toBe(3); // the third watch follows a 1 s reconnect back-off
    lw.stop();
    expect(events).toEqual(['add a', 'add b', 'update b@4', 'delete b', 'update a@5']);
    const watchUrls = seen.filter((s) => s.url.includes('watch=true')).map((s) => new URL(s.url, base).searchParams.get('resourceVersion'));
    expect(watchUrls).toEqual(['3', '4', '6']);
    expect(lw.list().map((o) => o.metadata.name)).toEqual(['a']);
    expect(lw.latestResourceVersion()).toBe('6');
  });

  it('asks for bookmarks and a 5-10 min timeout, and resumes from a bookmark without touching the cache', async () => {
    let watches = 0;
    handler = (r, res) => {
      if (!r.url.includes('watch=true'))
        return res.end(JSON.stringify({ items: [{ metadata: { name: 'a', resourceVersion: '2' } }], metadata: { resourceVersion: '3' } }));
      watches++;
      if (watches === 1) streamEvents(res, [{ type: 'BOOKMARK', object: { kind: 'Pod', metadata: { resourceVersion: '9' } } }]);
      else res.flushHeaders();
    };
    const c = createKubeClients(kubeconfig('{token: t}'));
    const events: string[] = [];
    const lw = new ListWatch<{ metadata: { name: string; resourceVersion: string } }>(
      c.transport,
      '/api/v1/pods',
      () => c.core.listPodForAllNamespaces() as never,
    );
    for (const verb of ['add', 'update', 'delete'] as const) lw.on(verb, (o) => events.push(`${verb} ${o.metadata.name}`));
    await lw.start();
    await expect.poll(() => watches).toBe(2);
    lw.stop();
    const params = seen.filter((s) => s.url.includes('watch=true')).map((s) => new URL(s.url, base).searchParams);
    expect(params.map((p) => p.get('resourceVersion'))).toEqual(['3', '9']);
    for (const p of params) {
      expect(p.get('allowWatchBookmarks')).toBe('true');
      expect(Number(p.get('timeoutSeconds'))).toBeGreaterThanOrEqual(300);
      expect(Number(p.get('timeoutSeconds'))).toBeLessThan(600);
    }
    expect(events).toEqual(['add a']);
    expect(lw.get('a')?.metadata.resourceVersion).toBe('2');
  });

  it("spreads watch timeouts over 5 to 10 minutes and waits a bookmark interval and 15 s (the cacher's DefaultEventFreshDuration) before taking a watch for dead", () => {
    expect(watchTimeoutSeconds(0)).toBe(300);
    expect(watchTimeoutSeconds(0.5)).toBe(450);
    expect(watchTimeoutSeconds(1)).toBe(599);
    expect(watchTimeoutSeconds(-1)).toBe(300);
    expect(LIST_WATCH_IDLE_TIMEOUT_MS).toBe(75_000);
  });

  it("reports a failed watch as 'error' and stops; start() resumes from the last resourceVersion", async () => {
    let watches = 0;
    handler = (r, res) => {
      if (!r.url.includes('watch=true')) return res.end(JSON.stringify({ items: [], metadata: { resourceVersion: '7' } }));
      watches++;
      if (watches === 1) {
        res.statusCode = 403;
        res.end(JSON.stringify({ kind: 'Status', message: 'forbidden' }));
      } else res.flushHeaders(); // open, as the apiserver answers a watch at once
    };
    const c = createKubeClients(kubeconfig('{token: t}'));
    const lw = new ListWatch(c.transport, '/apis/node.k8s.io/v1/runtimeclasses', () => c.node.listRuntimeClass());
    const errors: string[] = [];
    lw.on('error', (e) => errors.push(apiMessage(e)));
    await lw.start();
    await expect.poll(() => errors).toEqual(['forbidden']);
    await lw.start();
    await expect.poll(() => watches).toBe(2);
    lw.stop();
    expect(seen.filter((s) => !s.url.includes('watch=true'))).toHaveLength(1);
  });
});

/**
 * The API transport to an `https://` apiserver over HTTP/2 (core/kube/h2-connection.ts), against
 * node:http2 servers: one connection for requests and watches, a refused stream sent again after
 * GOAWAY, a dead connection replaced after a timeout and by the idle health check, and HTTP/1.1
 * with a server without h2.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiConnection } from '../../../core/kube/api-connection.ts';
import { ApiTransport } from '../../../core/kube/api-transport.ts';
import { H2Connection } from '../../../core/kube/h2-connection.ts';
import { KubeConfig } from '../../../core/kube/kubeconfig.ts';

const dir = mkdtempSync(join(tmpdir(), 'kube-h2-'));
let tls: { key: string; cert: string };
beforeAll(() => {
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=apiserver'] //
      .concat(['-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', 'tls.key', '-out', 'tls.crt']),
    { cwd: dir, stdio: 'ignore' },
  );
  tls = { key: readFileSync(join(dir, 'tls.key'), 'utf8'), cert: readFileSync(join(dir, 'tls.crt'), 'utf8') };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A transport to `https://127.0.0.1:port` that trusts the test certificate. */
function transport(port: number): ApiTransport {
  const file = join(dir, `kc-${port}.yaml`);
  writeFileSync(
    file,
    `apiVersion: v1
kind: Config
current-context: c
clusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}", certificate-authority: "${join(dir, 'tls.crt')}"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
`,
  );
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  return new ApiTransport(kc);
}

/** An HTTP/2 server; `handler` answers each stream. Counts its sessions. */
async function h2Server(handler: (s: http2.ServerHttp2Stream, h: http2.IncomingHttpHeaders, session: http2.ServerHttp2Session) => void) {
  const server = http2.createSecureServer(tls);
  const sessions: http2.ServerHttp2Session[] = [];
  server.on('session', (s) => sessions.push(s));
  server.on('stream', (s, h) => handler(s, h, s.session as http2.ServerHttp2Session));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    sessions,
    close: async () => {
      for (const s of sessions) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/**
 * A TCP relay to `port` whose connections can be black-holed: once `dead` is set, the connections it
 * has stay dead (bytes go in and nothing comes back); new ones work again after `dead` is cleared.
 */
async function blackHoleRelay(port: number) {
  const r = { dead: false, port: 0, server: net.createServer() };
  r.server.on('connection', (c) => {
    const up = net.connect(port, '127.0.0.1');
    let cut = false;
    const pass = () => !(cut ||= r.dead);
    c.on('data', (d) => void (pass() && up.write(d)));
    up.on('data', (d) => void (pass() && c.write(d)));
    const end = () => (c.destroy(), up.destroy());
    c.on('close', end).on('error', end);
    up.on('close', end).on('error', end);
  });
  await new Promise<void>((ok) => r.server.listen(0, '127.0.0.1', ok));
  r.port = (r.server.address() as AddressInfo).port;
  return r;
}

/** One exchange through `c`: the status and body, or the error. */
function exchange(c: ApiConnection, path: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    let status = 0;
    let text = '';
    c.send(
      { path, method: 'GET', headers: {} },
      { started() {}, response: (code) => (status = code), data: (d) => (text += d.toString()), end: () => resolve({ status, text }), error: reject },
    );
  });
}

const json = (s: http2.ServerHttp2Stream, body: object) => {
  s.respond({ ':status': 200, 'content-type': 'application/json' });
  s.end(JSON.stringify(body));
};

describe('the API transport over HTTP/2', () => {
  it('sends requests and a watch as streams of one connection, with the bearer token', async () => {
    const seen: string[] = [];
    const srv = await h2Server((s, h) => {
      seen.push(`${String(h[':method'])} ${String(h[':path'])} ${String(h.authorization)}`);
      if (String(h[':path']).includes('watch=true')) {
        s.respond({ ':status': 200 });
        s.write(JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a' } } }) + '\n{"type":"MOD');
        setImmediate(() => s.end('IFIED","object":{"metadata":{"name":"a"}}}\n'));
        return;
      }
      json(s, { metadata: { name: 'n1' } });
    });
    const t = transport(srv.port);
    try {
      expect(await t.request('GET', '/api/v1/nodes/n1')).toEqual({ metadata: { name: 'n1' } });
      await t.request('PATCH', '/api/v1/nodes/n1/status', { body: { status: {} }, contentType: 'application/merge-patch+json' });
      const events: string[] = [];
      const ended = new Promise((r) => void t.watch('/api/v1/pods', { resourceVersion: '1' }, (type) => events.push(type), r));
      expect(await ended).toBeNull();
      expect(events).toEqual(['ADDED', 'MODIFIED']);
      expect(seen).toEqual([
        'GET /api/v1/nodes/n1 Bearer t',
        'PATCH /api/v1/nodes/n1/status Bearer t',
        'GET /api/v1/pods?resourceVersion=1&watch=true Bearer t',
      ]);
      expect(srv.sessions).toHaveLength(1);
    } finally {
      await t.close();
      await srv.close();
    }
  });

  it('sends a stream the server refused with GOAWAY again on a new connection', async () => {
    let streams = 0;
    const srv = await h2Server((s, _h, session) => {
      if (streams++ === 0) {
        // A server shutting down: GOAWAY, and the stream refused unprocessed (RFC 9113 8.7: safe to send again).
        session.goaway(http2.constants.NGHTTP2_NO_ERROR);
        s.on('error', () => undefined); // the server's side of the refusal
        return void s.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      }
      json(s, { metadata: { name: 'again' } });
    });
    const t = transport(srv.port);
    try {
      expect(await t.request('GET', '/api/v1/nodes/again')).toEqual({ metadata: { name: 'again' } });
      expect([streams, srv.sessions.length]).toEqual([2, 2]);
    } finally {
      await t.close();
      await srv.close();
    }
  });

  it('gives up a request without an answer at its timeout; a connection that then fails a PING is replaced', async () => {
    const srv = await h2Server((s, h) => {
      if (String(h[':path']).includes('stuck')) return; // never answered
      json(s, { metadata: { name: 'n1' } });
    });
    const relay = await blackHoleRelay(srv.port);
    const t = transport(relay.port).withTimeout(300);
    try {
      // The server is alive: the timed-out request leaves the connection in use.
      await expect(t.request('GET', '/api/v1/nodes/stuck')).rejects.toThrow('no answer within 300 ms; the request was cancelled');
      expect(await t.request('GET', '/api/v1/nodes/n1')).toEqual({ metadata: { name: 'n1' } });
      expect(srv.sessions).toHaveLength(1);
      // The connection goes dead: the request times out, the PING gets no answer within 1 s, and the
      // next request (after the relay works again) gets its answer on a new connection.
      relay.dead = true;
      await expect(t.request('GET', '/api/v1/nodes/n1')).rejects.toThrow('no answer within 300 ms');
      await new Promise((r) => setTimeout(r, 1200)); // past the PING's 1 s
      relay.dead = false;
      expect(await t.request('GET', '/api/v1/nodes/n1')).toEqual({ metadata: { name: 'n1' } });
      expect(srv.sessions).toHaveLength(2);
    } finally {
      await t.close();
      relay.server.close();
      await srv.close();
    }
  });

  it("replaces a connection with open streams that stays silent and does not answer the health check's PING", async () => {
    const srv = await h2Server((s, h) => {
      if (String(h[':path']) === '/quiet') return; // a watch with nothing to say
      json(s, { ok: true });
    });
    const relay = await blackHoleRelay(srv.port);
    const c = new H2Connection(new URL(`https://127.0.0.1:${relay.port}`), { ca: tls.cert }, () => expect.fail('the server speaks h2'), {
      readIdleMs: 300,
      pingTimeoutMs: 300,
    });
    try {
      let settled: unknown;
      const quiet = exchange(c, '/quiet').then(
        (v) => (settled = v),
        (e: unknown) => (settled = e),
      );
      // Alive: the silent stream stays open while the PINGs are answered.
      await new Promise((r) => setTimeout(r, 1500)); // a fixed wait, several health checks long
      expect(settled).toBeUndefined();
      expect(await exchange(c, '/ok')).toEqual({ status: 200, text: '{"ok":true}' });
      // Dead: the next PING gets no answer within 1 s (the least), the stream fails, a new connection answers.
      relay.dead = true;
      await quiet;
      expect(String(settled)).toMatch(/no answer to a PING within 1000 ms/);
      relay.dead = false;
      expect(await exchange(c, '/ok')).toEqual({ status: 200, text: '{"ok":true}' });
      expect(srv.sessions).toHaveLength(2);
    } finally {
      await c.close();
      relay.server.close();
      await srv.close();
    }
  });

  it('speaks HTTP/1.1 to a server that does not offer h2', async () => {
    const versions: string[] = [];
    const server = https.createServer(tls, (req, res) => {
      versions.push(req.httpVersion);
      res.end(JSON.stringify({ metadata: { name: 'h1' } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const t = transport((server.address() as AddressInfo).port);
    try {
      expect(await t.request('GET', '/api/v1/nodes/h1')).toEqual({ metadata: { name: 'h1' } });
      expect(await t.request('GET', '/api/v1/nodes/h1')).toEqual({ metadata: { name: 'h1' } });
      expect(versions).toEqual(['1.1', '1.1']);
    } finally {
      await t.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

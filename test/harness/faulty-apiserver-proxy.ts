/**
 * A fault-injecting HTTPS proxy in front of a kube-apiserver, for tests of a slow or
 * throttling apiserver. It terminates TLS with a serving certificate the cluster CA signed
 * (so a kubeconfig that trusts the cluster CA trusts it) and forwards each request as an
 * HTTPS client presenting the client certificate it is given (the node's), so the
 * apiserver still sees the node's identity and its authorizers apply as without the proxy.
 * Responses are forwarded as they stream (watches stay watches).
 *
 *   client ──TLS (proxy cert)──► proxy ──mode?──► normal:   forward
 *                                          ├──► latency:  wait `latencyMs`, then forward
 *                                          └──► throttle: a non-watch request, with probability
 *                                                         `fraction`, gets `status` (429 or 503)
 *                                                         + `Retry-After: retryAfterSeconds` and a
 *                                                         Status body, as the apiserver's priority
 *                                                         and fairness (429) or its max-in-flight
 *                                                         filter (503) answer; the rest forward
 *
 * The mode can change at any time. Every request is recorded (time, mode, verb and
 * resource as the apiserver's RequestInfo names them, the status answered), so a test can
 * count requests per second per verb/resource in each mode, and see how soon a client came
 * back after being refused.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, createServer, request, type Server } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import type { ClusterInfo } from '../cluster/control-plane.ts';
import { issue, type Pki } from '../cluster/pki.ts';

/** What the proxy does to requests now. */
export type ProxyMode = 'normal' | 'latency' | 'throttle';

/** Settings of the faults (each used only in its mode). */
export interface FaultSettings {
  /** Added before each response starts, in `latency` mode. */
  latencyMs: number;
  /** Status of a refused request in `throttle` mode: 429 (priority and fairness) or 503. */
  status: 429 | 503;
  /** The `Retry-After` header of a refusal, in seconds. */
  retryAfterSeconds: number;
  /** Fraction (0..1) of non-watch requests refused in `throttle` mode. */
  fraction: number;
}

/** One request the proxy saw. */
export interface ProxiedRequest {
  /** When it arrived (ms since the epoch). */
  at: number;
  mode: ProxyMode;
  method: string;
  path: string;
  /** get, list, watch, create, update, patch, delete, deletecollection (the apiserver's verbs). */
  verb: string;
  /** The resource with its subresource, e.g. `pods/status`, `leases`, `nodes`. */
  resource: string;
  /** The status answered (0 when the upstream request failed). */
  status: number;
  /** Whether the proxy itself refused it. */
  refused: boolean;
}

/** Request counts over a window. */
export interface RequestRates {
  seconds: number;
  total: number;
  /** total / seconds. */
  perSecond: number;
  /** The most requests that arrived within any one second of the window (sliding). */
  peakPerSecond: number;
  /** `verb resource` → count. */
  byVerbResource: Record<string, number>;
  /** How many the proxy refused. */
  refused: number;
}

/** A running proxy. */
export interface FaultyApiServerProxy {
  /** `https://127.0.0.1:<port>`: use it as the kubeconfig's server. */
  readonly url: string;
  readonly settings: FaultSettings;
  /** Every request seen, in arrival order. */
  readonly requests: readonly ProxiedRequest[];
  mode: ProxyMode;
  /** Request counts of the requests that arrived in [from, to) (ms since the epoch), or of those of one mode. */
  rates(window: { from: number; to: number } | { mode: ProxyMode }): RequestRates;
  /**
   * For each refused request, the time until the next request with the same method and
   * path (the client trying again), in ms; refusals never followed are left out.
   */
  gapsAfterRefusal(window?: { from: number; to: number }): number[];
  close(): Promise<void>;
}

/** Options of {@link startFaultyApiServerProxy}. */
export interface FaultyProxyOptions {
  /** The apiserver to forward to (`https://host:port`). */
  upstream: string;
  /** The client certificate and key (paths) the proxy presents upstream. */
  client: { cert: string; key: string };
  settings?: Partial<FaultSettings>;
}

/** Verb and resource of a request path, as the apiserver's RequestInfo resolver names them. */
export function classify(method: string, path: string): { verb: string; resource: string } {
  const url = new URL(path, 'https://x');
  const parts = url.pathname.split('/').filter(Boolean);
  // /api/v1/... or /apis/<group>/<version>/...
  const rest = parts[0] === 'api' ? parts.slice(2) : parts[0] === 'apis' ? parts.slice(3) : undefined;
  if (!rest || rest.length === 0) return { verb: method.toLowerCase(), resource: url.pathname };
  const segs = rest[0] === 'namespaces' && rest.length > 2 ? rest.slice(2) : rest;
  const [resource, name, sub] = segs;
  const watch = ['true', '1'].includes(url.searchParams.get('watch') ?? '');
  let verb: string;
  switch (method.toUpperCase()) {
    case 'GET':
      verb = watch ? 'watch' : name ? 'get' : 'list';
      break;
    case 'POST':
      verb = 'create';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = name ? 'delete' : 'deletecollection';
      break;
    default:
      verb = method.toLowerCase();
  }
  return { verb, resource: sub ? `${resource}/${sub}` : resource! };
}

/** Headers that describe one hop only (RFC 9110 §7.6.1) and are not forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host']);

function forwardable(h: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  return out;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * Starts a proxy on 127.0.0.1 (a free port) in front of `o.upstream`, serving a certificate
 * issued by the cluster CA of `info` for 127.0.0.1 and localhost.
 */
export async function startFaultyApiServerProxy(info: ClusterInfo, o: FaultyProxyOptions): Promise<FaultyApiServerProxy> {
  const pki: Pki = { dir: join(info.dir, 'pki'), caCert: info.caCert, caKey: info.caKey, saKey: '', saPub: '' };
  const serving = issue(pki, {
    name: `faulty-proxy-${randomBytes(4).toString('hex')}`,
    cn: 'faulty-apiserver-proxy',
    usage: 'server',
    dnsNames: ['localhost'],
    ips: ['127.0.0.1'],
  });
  const upstream = new URL(o.upstream);
  const agent = new Agent({
    keepAlive: true,
    ca: readFileSync(info.caCert),
    cert: readFileSync(o.client.cert),
    key: readFileSync(o.client.key),
  });
  const settings: FaultSettings = { latencyMs: 500, status: 429, retryAfterSeconds: 1, fraction: 1, ...o.settings };
  const requests: ProxiedRequest[] = [];
  const sockets = new Set<Socket>();
  let mode: ProxyMode = 'normal';

  const refuse = (res: ServerResponse, rec: ProxiedRequest) => {
    const reason = settings.status === 429 ? 'TooManyRequests' : 'ServiceUnavailable';
    const message = settings.status === 429 ? 'Too many requests, please try again later.' : 'The server is currently unable to handle the request';
    const body = JSON.stringify({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message,
      reason,
      details: { retryAfterSeconds: settings.retryAfterSeconds },
      code: settings.status,
    });
    rec.status = settings.status;
    rec.refused = true;
    res.writeHead(settings.status, {
      'content-type': 'application/json',
      'retry-after': String(settings.retryAfterSeconds),
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  };

  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, rec: ProxiedRequest) => {
    const up = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...forwardable(req.headers), ...(body.length ? { 'content-length': body.length } : {}) },
        agent,
      },
      (ur) => {
        rec.status = ur.statusCode ?? 0;
        const headers = forwardable(ur.headers);
        res.writeHead(ur.statusCode ?? 502, headers);
        res.flushHeaders();
        ur.pipe(res);
        ur.on('error', () => res.destroy());
      },
    );
    up.on('error', () => {
      if (!res.headersSent) {
        res.writeHead(502);
        res.end();
      } else res.destroy();
    });
    // The client went away before the answer ended (e.g. a watch it ended): end the upstream request too.
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    up.end(body);
  };

  const server: Server = createServer({ cert: readFileSync(serving.cert), key: readFileSync(serving.key) }, (req, res) => {
    const at = Date.now();
    const { verb, resource } = classify(req.method ?? 'GET', req.url ?? '/');
    const rec: ProxiedRequest = { at, mode, method: req.method ?? 'GET', path: req.url ?? '/', verb, resource, status: 0, refused: false };
    requests.push(rec);
    void readBody(req).then(
      async (body) => {
        if (rec.mode === 'throttle' && verb !== 'watch' && Math.random() < settings.fraction) return refuse(res, rec);
        if (rec.mode === 'latency') await new Promise((r) => setTimeout(r, settings.latencyMs));
        forward(req, res, body, rec);
      },
      () => res.destroy(),
    );
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;

  const inWindow = (w?: { from: number; to: number } | { mode: ProxyMode }) => (r: ProxiedRequest) =>
    !w ? true : 'mode' in w ? r.mode === w.mode : r.at >= w.from && r.at < w.to;

  return {
    url: `https://127.0.0.1:${port}`,
    settings,
    requests,
    get mode() {
      return mode;
    },
    set mode(m: ProxyMode) {
      mode = m;
    },
    rates(w) {
      const rs = requests.filter(inWindow(w));
      const from = 'mode' in w ? (rs[0]?.at ?? 0) : w.from;
      const to = 'mode' in w ? (rs.at(-1)?.at ?? 0) + 1 : w.to;
      const seconds = Math.max(0.001, (to - from) / 1000);
      const byVerbResource: Record<string, number> = {};
      for (const r of rs) byVerbResource[`${r.verb} ${r.resource}`] = (byVerbResource[`${r.verb} ${r.resource}`] ?? 0) + 1;
      let peak = 0;
      for (let i = 0, j = 0; i < rs.length; i++) {
        while (rs[i]!.at - rs[j]!.at >= 1000) j++;
        peak = Math.max(peak, i - j + 1);
      }
      return { seconds, total: rs.length, perSecond: rs.length / seconds, peakPerSecond: peak, byVerbResource, refused: rs.filter((r) => r.refused).length };
    },
    gapsAfterRefusal(w) {
      const rs = requests.filter(inWindow(w));
      const gaps: number[] = [];
      rs.forEach((r, i) => {
        if (!r.refused) return;
        const next = rs.slice(i + 1).find((n) => n.method === r.method && n.path === r.path);
        if (next) gaps.push(next.at - r.at);
      });
      return gaps;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
      agent.destroy();
    },
  };
}

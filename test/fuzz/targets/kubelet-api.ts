/**
 * The kubelet API: generated requests (paths with traversal and encoding
 * tricks, query parameters, methods, headers, bodies; with the local client
 * certificate, anonymous, or with a bogus bearer token) and malformed HTTP
 * written on a raw TLS socket. Oracles: an answer within the time limit, no
 * 5xx but 501/503, no 2xx to an unauthenticated caller, no canary secret in
 * any answer.
 */
import { connect } from 'node:tls';
import { ESCAPE_MARKER, type FuzzEnvironment, type HttpResult } from '../environment.ts';
import type { Outcome } from '../outcome.ts';
import type { Rng } from '../rng.ts';

const ROUTES = [
  '/pods',
  '/runningpods/',
  '/healthz',
  '/healthz/ping',
  '/metrics',
  '/metrics/cadvisor',
  '/metrics/probes',
  '/metrics/resource',
  '/stats/summary',
  '/stats/',
  '/spec/',
  '/configz',
  '/logs/',
  '/containerLogs/{ns}/{pod}/{c}',
  '/exec/{ns}/{pod}/{c}',
  '/attach/{ns}/{pod}/{c}',
  '/run/{ns}/{pod}/{c}',
  '/portForward/{ns}/{pod}',
  '/checkpoint/{ns}/{pod}/{c}',
  '/debug/pprof/',
  '/debug/flags/v',
  '/',
  '',
];

const SEGMENTS = (canaryRel: string) => [
  'default',
  'kube-system',
  'hello-wasi-fuzz',
  'c',
  '..',
  '.',
  '%2e%2e',
  '%2f',
  '..%2f..%2f..%2f',
  '../../../../etc/passwd',
  canaryRel,
  '%00',
  'a'.repeat(5000),
  '%F0%9F%92%A9',
  '%ZZ',
  '*',
  '~root',
  `${ESCAPE_MARKER}`,
  '',
];

const QUERY_KEYS = [
  'tailLines',
  'limitBytes',
  'sinceSeconds',
  'sinceTime',
  'follow',
  'timestamps',
  'previous',
  'query',
  'boot',
  'pattern',
  'command',
  'stdin',
  'tty',
  'port',
  'only_cpu_and_memory',
  'container',
  'input',
];
const QUERY_VALUES = [
  '-1',
  '0',
  '1',
  '1e309',
  'NaN',
  'abc',
  '99999999999999999999',
  'true',
  'false',
  '../../x',
  '2026-13-45T99:99:99Z',
  '%00',
  'x'.repeat(3000),
  '',
];
const METHODS = ['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE', 'FOO'];

function randomHeaders(r: Rng): Record<string, string> {
  const h: Record<string, string> = {};
  const n = r.int(0, 3);
  for (let i = 0; i < n; i++) {
    switch (r.int(0, 8)) {
      case 0:
        h['Authorization'] = `Bearer ${r.string(r.int(0, 200), 'abcdefABCDEF0123456789.-_')}`;
        break;
      case 1:
        h['X-Remote-User'] = 'system:admin';
        h['Impersonate-User'] = 'system:admin';
        break;
      case 2:
        h['Content-Type'] = r.pick(['application/json', 'text/plain', 'multipart/form-data; boundary=', 'application/json; charset=utf-42']);
        break;
      case 3:
        h['Upgrade'] = r.pick(['websocket', 'SPDY/3.1', 'h2c']);
        h['Connection'] = 'Upgrade';
        h['X-Stream-Protocol-Version'] = r.pick(['v4.channel.k8s.io', 'portforward.k8s.io', 'junk']);
        break;
      case 4:
        h['Accept'] = r.pick(['*/*', 'application/vnd.kubernetes.protobuf', 'text/html;q=abc']);
        break;
      case 5:
        h['X-Big'] = 'x'.repeat(r.int(1000, 12_000));
        break;
      case 6:
        h['Accept-Encoding'] = r.pick(['gzip', 'br', 'identity;q=0', '*;q=0']);
        break;
      case 7:
        h['Range'] = r.pick(['bytes=0-1', 'bytes=-1', 'bytes=999999999-']);
        break;
      default:
        h['Host'] = r.pick(['evil.example', '', '127.0.0.1:1']);
    }
  }
  return h;
}

function randomPath(r: Rng, canaryRel: string): string {
  const segs = SEGMENTS(canaryRel);
  let path = r.pick(ROUTES).replace(/\{\w+\}/g, () => r.pick(segs));
  if (r.chance(0.3)) path += `/${r.pick(segs)}`;
  if (r.chance(0.1)) path = path.replace(/\//g, r.pick(['//', '/./', '\\']));
  const q = r.int(0, 3);
  const params: string[] = [];
  for (let i = 0; i < q; i++) params.push(`${r.pick(QUERY_KEYS)}=${encodeURIComponent(r.pick(QUERY_VALUES))}`);
  if (r.chance(0.05)) params.push('a=%');
  return (path || '/') + (params.length ? `?${params.join('&')}` : '');
}

/** Raw bytes that are not a well-formed HTTP/1.1 request. */
const RAW: Array<(r: Rng) => Buffer> = [
  (r) => r.bytes(r.int(1, 2000)),
  () => Buffer.from('GET /pods HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'),
  () => Buffer.from('POST /pods HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n'),
  () => Buffer.from('POST /pods HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFF\r\n'),
  () => Buffer.from(`GET /${'a'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`),
  () => Buffer.from(`GET /pods HTTP/1.1\r\n${'X-A: b\r\n'.repeat(5000)}\r\n`),
  () => Buffer.from('GET /pods HTTP/9.9\r\n\r\n'),
  () => Buffer.from('\r\n\r\n\r\n'),
  () => Buffer.from('GET /pods HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc'),
  () => Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
];

/** Sends raw bytes over TLS with the client certificate: an HTTP status line, or the connection closed, within 10 s. */
function rawRequest(env: FuzzEnvironment, bytes: Buffer): Promise<string> {
  const { port, ca, cert, key } = env.endpoint();
  return new Promise((done) => {
    let out = '';
    const s = connect({ host: '127.0.0.1', port, ca, cert, key, rejectUnauthorized: true }, () => s.end(bytes));
    const timer = setTimeout(() => (done('timeout'), s.destroy()), 10_000);
    s.on('data', (c: Buffer) => (out += c.toString('latin1').slice(0, 200)));
    s.on('close', () => (clearTimeout(timer), done(/^HTTP\/1\.1 (\d{3})/.exec(out)?.[1] ? `status ${/^HTTP\/1\.1 (\d{3})/.exec(out)![1]}` : 'closed')));
    s.on('error', () => undefined);
  });
}

/** Classifies one answer; `anonymous` callers must never get a 2xx. */
function verdictOf(env: FuzzEnvironment, r: HttpResult, anonymous: boolean): Pick<Outcome, 'verdict' | 'detail'> {
  if ('timeout' in r) return { verdict: 'hang', detail: 'no answer in 5 s' };
  if ('error' in r)
    return env.alive() ? { verdict: 'classified', detail: `connection error: ${r.error.slice(0, 80)}` } : { verdict: 'crash', detail: env.exitDescription() };
  if (r.body.includes(env.secret)) return { verdict: 'leak', detail: `status ${r.status} carried the canary secret` };
  if (anonymous && r.status < 300) return { verdict: 'leak', detail: `status ${r.status} to an anonymous caller` };
  if (r.status >= 500 && r.status !== 501 && r.status !== 503) return { verdict: 'unclassified', detail: `status ${r.status}: ${r.body.slice(0, 120)}` };
  return { verdict: 'classified', detail: `status ${r.status}` };
}

/** Runs `count` kubelet API inputs (about one in ten raw). */
export async function fuzzKubeletApi(env: FuzzEnvironment, rng: Rng, count: number, record: (o: Outcome) => void): Promise<void> {
  const canaryRel = `..%2f..%2f..%2f..%2f..%2f..%2f..%2f..%2f${env.canaryDir.slice(1).replace(/\//g, '%2f')}%2fsecret.txt`;
  for (let i = 0; i < count && env.alive(); i++) {
    if (rng.chance(0.1)) {
      const k = rng.int(0, RAW.length - 1);
      const got = await rawRequest(env, RAW[k]!(rng));
      const bad = got === 'timeout' || /^status 5(?!0[13])/.test(got);
      record({ target: 'kubelet-api', input: `raw #${k}`, verdict: got === 'timeout' ? 'hang' : bad ? 'unclassified' : 'classified', detail: got });
      continue;
    }
    const auth = rng.pick(['cert', 'cert', 'anonymous', 'bearer'] as const);
    const method = rng.pick(METHODS);
    const path = randomPath(rng, canaryRel);
    const headers = randomHeaders(rng);
    if (auth === 'bearer') headers['Authorization'] = `Bearer ${rng.string(40, 'abcdef0123456789')}`;
    const body = method === 'GET' || method === 'HEAD' || !rng.chance(0.5) ? undefined : rng.chance(0.5) ? rng.bytes(rng.int(0, 4096)) : '{"kind":"Pod"';
    const follows = /follow=true/.test(path);
    const r = await env.api({ method, path, headers, body, auth: auth === 'cert' ? 'cert' : 'anonymous', streamMs: follows ? 500 : undefined });
    const v = verdictOf(env, r, auth !== 'cert');
    const hs = Object.entries(headers).map(([k, x]) => `${k}=${x.length > 30 ? `${x.slice(0, 30)}…(${x.length})` : x}`);
    const sent = body === undefined ? '' : ` body ${typeof body === 'string' ? body.length : body.length} bytes`;
    record({ target: 'kubelet-api', input: `${auth} ${method} ${path.slice(0, 120)} [${hs.join(' ')}]${sent}`, ...v });
  }
}

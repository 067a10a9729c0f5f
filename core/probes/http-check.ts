/**
 * The HTTP check of probes and lifecycle hooks (upstream pkg/probe/http):
 * GET with `User-Agent: kube-probe/1.36` and `Accept: *\/*` (the action's
 * headers override them), at most 10 KiB of the body read, redirects
 * followed up to 10 times while they stay on the same host (a redirect
 * elsewhere ends the check with a `warning`), 200–399 a success, anything
 * else `HTTP probe failed with statuscode: N`. HTTPS skips certificate
 * verification, as upstream does.
 *
 * Every request goes through the one keep-alive undici `Agent` of the probe
 * manager (built in the composition root), not a connection per check.
 */
import { newAgent, request, type Agent } from '../kube/index.ts';
import { KUBELET_COMPATIBLE_VERSION } from '../config/index.ts';
import type { CheckOutcome } from './probe-types.ts';

/** The User-Agent of probe and hook requests (`kube-probe/<major>.<minor>`, as upstream). */
export const PROBE_USER_AGENT = `kube-probe/${KUBELET_COMPATIBLE_VERSION.replace(/^v/, '')}`;
const MAX_BODY = 10 * 1024;
const MAX_REDIRECTS = 10;

/**
 * The shared keep-alive client of every probe and hook request. No cap on
 * connections per origin: many `hostNetwork` pods share one origin
 * (127.0.0.1:port), and a cap would queue their checks behind each other
 * (the queue counts against each check's timeout); idle connections are
 * reused, so steady probing needs about one per concurrent check.
 */
export function createProbeAgent(): Agent {
  return newAgent({ keepAliveTimeout: 30_000, connect: { rejectUnauthorized: false } });
}

/** Go's wording of a dial/read error, so events read like upstream's. */
export function dialError(e: unknown, hostPort: string): string {
  const err = e as { code?: string; message?: string; name?: string; cause?: { code?: string } };
  const code = err.code ?? err.cause?.code;
  if (code === 'ECONNREFUSED') return `dial tcp ${hostPort}: connect: connection refused`;
  if (code === 'EHOSTUNREACH') return `dial tcp ${hostPort}: connect: no route to host`;
  if (code === 'ECONNRESET') return `read tcp ${hostPort}: read: connection reset by peer`;
  if (err.name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT')
    return 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)';
  return err.message ?? String(e);
}

/** Reads at most 10 KiB; a longer body is cut (upstream: a non-fatal truncation) and its connection given up. */
async function readAtMost(body: AsyncIterable<Uint8Array> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of body) {
    const b = Buffer.from(c);
    chunks.push(b.subarray(0, MAX_BODY - n));
    n += b.length;
    if (n >= MAX_BODY) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Runs one HTTP GET check of `url` within `timeoutMs`. */
export async function httpGetCheck(agent: Agent, url: URL, headers: Record<string, string>, timeoutMs: number): Promise<CheckOutcome> {
  const hdrs: Record<string, string> = { 'user-agent': PROBE_USER_AGENT, accept: '*/*' };
  for (const [k, v] of Object.entries(headers)) hdrs[k.toLowerCase()] = v;
  const signal = AbortSignal.timeout(timeoutMs);
  let current = url;
  for (let hops = 0; ; hops++) {
    let res;
    try {
      res = await request(current, { method: 'GET', headers: hdrs, dispatcher: agent, signal, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    } catch (e) {
      return { result: 'failure', output: `Get "${current.href}": ${dialError(signal.aborted ? { name: 'TimeoutError' } : e, current.host)}` };
    }
    let body = '';
    try {
      body = await readAtMost(res.body);
    } catch (e) {
      res.body.destroy();
      return { result: 'failure', output: `Get "${current.href}": ${dialError(e, current.host)}` };
    }
    const code = res.statusCode;
    const location = res.headers.location;
    if (code >= 300 && code < 400 && typeof location === 'string') {
      const next = new URL(location, current);
      if (next.hostname === current.hostname) {
        if (hops + 1 >= MAX_REDIRECTS) return { result: 'failure', output: `Get "${next.href}": stopped after ${MAX_REDIRECTS} redirects` };
        current = next;
        continue;
      }
    }
    if (code >= 200 && code < 400) {
      if (code >= 300) return { result: 'warning', output: `Probe terminated redirects, Response body: ${body}` };
      return { result: 'success', output: body };
    }
    return { result: 'failure', output: `HTTP probe failed with statuscode: ${code}` };
  }
}

/** Direct HTTPS calls to a nodelet's kubelet API, as a client certificate or a bearer token. */
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { httpsGet } from '../../cluster/control-plane.ts';

/** Who calls: a client certificate (paths), a bearer token, or nobody. */
export interface Caller {
  readonly cert?: string;
  readonly key?: string;
  readonly token?: string;
}

/** GETs `path` on 127.0.0.1:`port`, verifying the serving certificate with `caFile`. */
export function kubeletGet(port: number, path: string, caFile: string, who: Caller = {}): Promise<{ status: number; body: string }> {
  return httpsGet(`https://127.0.0.1:${port}${path}`, { ca: caFile, ...who }, 15_000);
}

/** Sends `method path` (no body, no upgrade) to 127.0.0.1:`port`, as {@link kubeletGet}. */
export function kubeletRequest(port: number, method: string, path: string, caFile: string, who: Caller = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `https://127.0.0.1:${port}${path}`,
      {
        method,
        ca: readFileSync(caFile),
        timeout: 15_000,
        ...(who.cert && who.key ? { cert: readFileSync(who.cert), key: readFileSync(who.key) } : {}),
        headers: who.token ? { authorization: `Bearer ${who.token}` } : {},
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

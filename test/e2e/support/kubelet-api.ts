/** Direct HTTPS calls to a nodelet's kubelet API, as a client certificate or a bearer token. */
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

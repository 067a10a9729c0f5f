/**
 * Token reuse like upstream's token manager (pkg/kubelet/token): a token is
 * reused until it needs a refresh — 80 % of its TTL passed, or 24 h since it
 * was issued — so re-syncing projected volumes costs no TokenRequest calls. A pod's tokens are
 * dropped when the pod is torn down (`forgetPod`).
 */
import type { IssuedToken, ObjectSource, TokenRequestOptions } from './object-source.ts';

const MAX_TTL_MS = 24 * 60 * 60 * 1000;

/** When a token issued for `expirationSeconds` and expiring at `expires` must be renewed. */
export function tokenRefreshAt(expires: Date, expirationSeconds: number): Date {
  const ttlMs = expirationSeconds * 1000;
  const issued = expires.getTime() - ttlMs;
  return new Date(Math.min(expires.getTime() - ttlMs * 0.2, issued + MAX_TTL_MS));
}

/** Wraps `source` so that `requestServiceAccountToken` answers from a cache while the token is fresh. */
export function withTokenCache(source: ObjectSource, now: () => number = Date.now): ObjectSource {
  const cache = new Map<string, { token: IssuedToken; refreshAt: number; podUID?: string }>();
  /** Requests in flight: a second ask for the same token joins the first (a pod's prefetch, then its volume). */
  const pending = new Map<string, Promise<IssuedToken>>();
  return {
    getConfigMap: (ns, name) => source.getConfigMap(ns, name),
    getSecret: (ns, name) => source.getSecret(ns, name),
    forgetPod(podUID: string) {
      for (const [k, v] of cache) if (v.podUID === podUID) cache.delete(k);
    },
    async requestServiceAccountToken(ns: string, sa: string, opts: TokenRequestOptions): Promise<IssuedToken> {
      const t = now();
      for (const [k, v] of cache) if (v.token.expirationTimestamp.getTime() <= t) cache.delete(k);
      const key = JSON.stringify([ns, sa, opts.audience ?? '', opts.expirationSeconds, opts.podName, opts.podUID]);
      const hit = cache.get(key);
      if (hit && t < hit.refreshAt) return hit.token;
      const inFlight = pending.get(key);
      if (inFlight) return inFlight;
      const request = source.requestServiceAccountToken(ns, sa, opts).then((token) => {
        cache.set(key, { token, refreshAt: tokenRefreshAt(token.expirationTimestamp, opts.expirationSeconds).getTime(), podUID: opts.podUID });
        return token;
      });
      pending.set(key, request);
      try {
        return await request;
      } finally {
        pending.delete(key);
      }
    },
  };
}

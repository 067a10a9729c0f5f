/**
 * Bearer-token authentication by TokenReview (`--authentication-token-webhook`),
 * as upstream's delegating authenticator: the token is sent to the apiserver
 * (`authentication.k8s.io/v1` TokenReview, no audiences: the apiserver's own),
 * and the answer — authenticated or not — is cached for
 * `--authentication-token-webhook-cache-ttl` (default 2m) under a hash of the
 * token. Failed calls are not cached; the request then gets 401.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type * as k8s from '@kubernetes/client-node';
import { nodeletError } from '../errors/index.ts';
import { apiMessage, type KubeClients } from '../kube/index.ts';
import type { TokenAuthenticator, UserInfo } from './authn.ts';

/** One TokenReview round trip: the status the apiserver answered. */
export type TokenReviewer = (token: string) => Promise<k8s.V1TokenReviewStatus | undefined>;

/** A {@link TokenReviewer} that posts TokenReviews through `clients`. */
export function apiTokenReviewer(clients: KubeClients): TokenReviewer {
  const api = clients.reviews;
  return async (token) => {
    try {
      const r = await api.createTokenReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } } });
      return r.status;
    } catch (e) {
      throw nodeletError('NDL_API_TOKEN_REVIEW', apiMessage(e), e);
    }
  };
}

/** Turns a TokenReview status into the user, or undefined if not authenticated. */
export function userFromReview(s: k8s.V1TokenReviewStatus | undefined): UserInfo | undefined {
  if (!s?.authenticated || !s.user?.username) return undefined;
  return { name: s.user.username, groups: s.user.groups ?? [], uid: s.user.uid, extra: s.user.extra };
}

/** A cached token authenticator over `review` (answers kept `ttlMs`, `--authentication-token-webhook-cache-ttl`; 0 = no cache). */
export function cachedTokenAuthenticator(review: TokenReviewer, ttlMs: number): TokenAuthenticator {
  const cache = ttlMs > 0 ? new LRUCache<string, { user: UserInfo | false }>({ max: 4096, ttl: ttlMs }) : undefined;
  return async (token) => {
    const key = createHash('sha256').update(token).digest('hex');
    const hit = cache?.get(key);
    if (hit) return hit.user || undefined;
    const user = userFromReview(await review(token));
    cache?.set(key, { user: user ?? false });
    return user;
  };
}

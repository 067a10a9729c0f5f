/**
 * `--authorization-mode=Webhook`: each question of authz.ts becomes a
 * SubjectAccessReview (`authorization.k8s.io/v1`) with the caller's user,
 * groups, uid and extra, and `resourceAttributes` {verb, version v1, resource
 * nodes, subresource, name = node name}, as upstream's kubelet asks it.
 * Answers are cached like upstream's webhook authorizer: allowed for
 * `--authorization-webhook-cache-authorized-ttl` (5m), denied for
 * `--authorization-webhook-cache-unauthorized-ttl` (30s). A failed call is
 * not cached and surfaces as an error (the server answers 500 "Authorization error").
 */
import { LRUCache } from 'lru-cache';
import type * as k8s from '@kubernetes/client-node';
import { nodeletError } from '../errors/index.ts';
import { apiMessage, type KubeClients } from '../kube/index.ts';
import type { Authorizer, Decision, RequestAttributes } from './authz.ts';

/** One SubjectAccessReview round trip. */
export type AccessReviewer = (spec: k8s.V1SubjectAccessReviewSpec) => Promise<k8s.V1SubjectAccessReviewStatus | undefined>;

/** An {@link AccessReviewer} that posts SubjectAccessReviews through `clients`. */
export function apiAccessReviewer(clients: KubeClients): AccessReviewer {
  const api = clients.reviews;
  return async (spec) => {
    try {
      const r = await api.createSubjectAccessReview({ body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec } });
      return r.status;
    } catch (e) {
      throw nodeletError('NDL_API_ACCESS_REVIEW', apiMessage(e), e);
    }
  };
}

/** The SubjectAccessReview spec of one question. */
export function accessReviewSpec(a: RequestAttributes): k8s.V1SubjectAccessReviewSpec {
  const extra = a.user.extra ? Object.fromEntries(Object.entries(a.user.extra).map(([k, v]) => [k, [...v]])) : undefined;
  return {
    user: a.user.name,
    groups: [...a.user.groups],
    uid: a.user.uid,
    extra,
    resourceAttributes: { verb: a.verb, group: '', version: a.apiVersion, resource: a.resource, subresource: a.subresource, name: a.name },
  };
}

/** TTLs of {@link webhookAuthorizer} (`authorization.webhook.cacheAuthorizedTTL` / `cacheUnauthorizedTTL`). */
export interface WebhookAuthzOptions {
  readonly authorizedTtlMs: number;
  readonly unauthorizedTtlMs: number;
}

/** The Webhook authorizer over `review`, with upstream's caching. */
export function webhookAuthorizer(review: AccessReviewer, o: WebhookAuthzOptions): Authorizer {
  const allowTtl = o.authorizedTtlMs;
  const denyTtl = o.unauthorizedTtlMs;
  const cache = new LRUCache<string, Decision>({ max: 8192, ttl: Math.max(allowTtl, denyTtl, 1) });
  return async (a) => {
    const spec = accessReviewSpec(a);
    const key = JSON.stringify(spec);
    const hit = cache.get(key);
    if (hit) return hit;
    const s = await review(spec);
    const d: Decision = { allowed: s?.allowed === true && s.denied !== true, reason: s?.reason };
    const ttl = d.allowed ? allowTtl : denyTtl;
    if (ttl > 0) cache.set(key, d, { ttl });
    return d;
  };
}

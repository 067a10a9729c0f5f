import { describe, expect, it } from 'vitest';
import type { V1SubjectAccessReviewSpec, V1TokenReviewStatus } from '@kubernetes/client-node';
import { cachedTokenAuthenticator, userFromReview } from '../../../core/server/token-review.ts';
import { accessReviewSpec, webhookAuthorizer } from '../../../core/server/webhook-authz.ts';
import { requestAttributes } from '../../../core/server/authz.ts';

const sa = {
  authenticated: true,
  user: {
    username: 'system:serviceaccount:kube-system:metrics-server',
    uid: 'u-1',
    groups: ['system:serviceaccounts', 'system:authenticated'],
    extra: { 'authentication.kubernetes.io/pod-name': ['ms-0'] },
  },
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('TokenReview authentication', () => {
  it('maps the review status to the user; unauthenticated is undefined', () => {
    expect(userFromReview(sa)).toEqual({ name: sa.user.username, groups: sa.user.groups, uid: 'u-1', extra: sa.user.extra });
    expect(userFromReview({ authenticated: false, error: 'bad' })).toBeUndefined();
    expect(userFromReview(undefined)).toBeUndefined();
  });

  it('caches accepted and rejected tokens for the TTL, but not failures', async () => {
    const asked: string[] = [];
    let failing = false;
    const auth = cachedTokenAuthenticator(async (token): Promise<V1TokenReviewStatus> => {
      asked.push(token);
      if (failing) throw new Error('apiserver unreachable');
      return token === 'good' ? sa : { authenticated: false };
    }, 60_000);
    expect((await auth('good'))?.name).toBe(sa.user.username);
    expect(await auth('bad')).toBeUndefined();
    expect((await auth('good'))?.name).toBe(sa.user.username);
    expect(await auth('bad')).toBeUndefined();
    expect(asked).toEqual(['good', 'bad']);
    failing = true;
    await expect(auth('other')).rejects.toThrow('apiserver unreachable');
    await expect(auth('other')).rejects.toThrow('apiserver unreachable');
    expect(asked).toEqual(['good', 'bad', 'other', 'other']);
  });

  it('asks again once the TTL has passed, and every time with TTL 0', async () => {
    let n = 0;
    const short = cachedTokenAuthenticator(async () => {
      n++;
      return sa;
    }, 20);
    await short('t');
    await short('t');
    expect(n).toBe(1);
    await sleep(40); // past the 20 ms TTL: time passing is what is tested
    await short('t');
    expect(n).toBe(2);
    let m = 0;
    const none = cachedTokenAuthenticator(async () => {
      m++;
      return sa;
    }, 0);
    await none('t');
    await none('t');
    expect(m).toBe(2);
  });
});

describe('SubjectAccessReview authorization', () => {
  const user = { name: 'alice', groups: ['devs'], uid: 'u-9', extra: { scopes: ['a'] } };

  it('asks with the caller and upstream resource attributes', () => {
    const [a] = requestAttributes(user, 'GET', '/stats/summary', 'node-1');
    expect(accessReviewSpec(a!)).toEqual({
      user: 'alice',
      groups: ['devs'],
      uid: 'u-9',
      extra: { scopes: ['a'] },
      resourceAttributes: { verb: 'get', group: '', version: 'v1', resource: 'nodes', subresource: 'stats', name: 'node-1' },
    });
  });

  it('caches allowed answers for the authorized TTL and denied ones for the unauthorized TTL', async () => {
    const asked: V1SubjectAccessReviewSpec[] = [];
    let allow = false;
    const authz = webhookAuthorizer(
      async (spec) => {
        asked.push(spec);
        return { allowed: allow };
      },
      { authorizedTtlMs: 60_000, unauthorizedTtlMs: 30 },
    );
    const [a] = requestAttributes(user, 'GET', '/containerLogs/ns/p/c', 'node-1');
    expect((await authz(a!)).allowed).toBe(false);
    allow = true;
    expect((await authz(a!)).allowed).toBe(false); // denied answer still cached
    expect(asked).toHaveLength(1);
    await sleep(60); // past the 30 ms TTL of a denial: time passing is what is tested
    expect((await authz(a!)).allowed).toBe(true);
    allow = false;
    expect((await authz(a!)).allowed).toBe(true); // allowed answer cached for a minute
    expect(asked).toHaveLength(2);
    expect(asked[0]!.resourceAttributes?.subresource).toBe('proxy');
  });

  it('an explicit denial wins and a failed review is not cached', async () => {
    let calls = 0;
    const authz = webhookAuthorizer(
      async () => {
        calls++;
        if (calls === 1) throw new Error('timeout');
        return { allowed: true, denied: true };
      },
      { authorizedTtlMs: 300_000, unauthorizedTtlMs: 30_000 },
    );
    const [a] = requestAttributes(user, 'GET', '/pods', 'node-1');
    await expect(authz(a!)).rejects.toThrow('timeout');
    expect((await authz(a!)).allowed).toBe(false);
    expect(calls).toBe(2);
  });
});

import { describe, expect, it } from 'vitest';
import { authorize, requestAttributes, subresourcesFor } from '../../../core/server/authz.ts';

const user = { name: 'alice', groups: ['devs'] };

describe('kubelet API authorization attributes', () => {
  it.each([
    ['/stats/summary', ['stats']],
    ['/metrics/cadvisor', ['metrics']],
    ['/logs/syslog', ['log']],
    ['/pods', ['pods', 'proxy']],
    ['/healthz', ['healthz', 'proxy']],
    ['/configz', ['configz', 'proxy']],
    ['/containerLogs/ns/p/c', ['proxy']],
    ['/exec/ns/p/c', ['proxy']],
    ['/statsx', ['proxy']],
    ['/podsx', ['proxy']],
  ])('%s → %j', (p, subs) => {
    expect(subresourcesFor(p)).toEqual(subs);
  });

  it('maps HTTP methods to verbs', () => {
    const verbs = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].map((m) => requestAttributes(user, m, '/run/a/b/c', 'n1')[0]!.verb);
    expect(verbs).toEqual(['get', 'create', 'update', 'patch', 'delete', '']);
    expect(requestAttributes(user, 'GET', '/x', 'n1')[0]).toMatchObject({ resource: 'nodes', name: 'n1', apiVersion: 'v1' });
  });

  it('allows through the proxy fallback and words a denial like upstream', async () => {
    const attrs = requestAttributes(user, 'GET', '/pods', 'n1');
    expect(await authorize((a) => ({ allowed: a.subresource === 'proxy' }), attrs)).toBeUndefined();
    expect(await authorize(() => ({ allowed: false }), attrs)).toEqual({
      status: 403,
      message: 'Forbidden (user=alice, verb=get, resource=nodes, subresource=pods)',
    });
  });

  it('answers 500 "Authorization error" when the authorizer cannot decide', async () => {
    const attrs = requestAttributes(user, 'GET', '/stats/summary', 'n1');
    const r = await authorize(() => {
      throw new Error('apiserver down');
    }, attrs);
    expect(r).toMatchObject({ status: 500, message: 'Authorization error (user=alice, verb=get, resource=nodes, subresource=stats)' });
  });
});

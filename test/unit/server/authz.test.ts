import { describe, expect, it } from 'vitest';
import { authorize, decodedPath, requestAttributes, subresourcesFor, type RequestAttributes } from '../../../core/server/authz.ts';

const user = { name: 'alice', groups: ['devs'] };

/** Upstream's table: pkg/kubelet/server/auth_test.go, AuthzTestCases(fineGrained=true) used by TestGetRequestAttributes. */
const UPSTREAM: Record<string, string[]> = {
  '/attach/{podNamespace}/{podID}/{containerName}': ['proxy'],
  '/attach/{podNamespace}/{podID}/{uid}/{containerName}': ['proxy'],
  '/checkpoint/{podNamespace}/{podID}/{containerName}': ['checkpoint'],
  '/configz': ['configz', 'proxy'],
  '/flagz': ['configz'],
  '/statusz': ['statusz'],
  '/containerLogs/{podNamespace}/{podID}/{containerName}': ['proxy'],
  '/debug/flags/v': ['proxy'],
  '/debug/pprof/{subpath:*}': ['proxy'],
  '/exec/{podNamespace}/{podID}/{containerName}': ['proxy'],
  '/exec/{podNamespace}/{podID}/{uid}/{containerName}': ['proxy'],
  '/healthz': ['healthz', 'proxy'],
  '/healthz/log': ['healthz', 'proxy'],
  '/healthz/ping': ['healthz', 'proxy'],
  '/healthz/syncloop': ['healthz', 'proxy'],
  '/logs/': ['log'],
  '/logs/{logpath:*}': ['log'],
  '/metrics': ['metrics'],
  '/metrics/slis': ['metrics'],
  '/metrics/cadvisor': ['metrics'],
  '/metrics/probes': ['metrics'],
  '/metrics/resource': ['metrics'],
  '/pods/': ['pods', 'proxy'],
  '/portForward/{podNamespace}/{podID}': ['proxy'],
  '/portForward/{podNamespace}/{podID}/{uid}': ['proxy'],
  '/run/{podNamespace}/{podID}/{containerName}': ['proxy'],
  '/run/{podNamespace}/{podID}/{uid}/{containerName}': ['proxy'],
  '/runningpods/': ['pods', 'proxy'],
  '/stats/': ['stats'],
  '/stats/summary': ['stats'],
};
const UPSTREAM_VERBS: Array<[string, string]> = [
  ['POST', 'create'],
  ['GET', 'get'],
  ['PUT', 'update'],
  ['PATCH', 'patch'],
  ['DELETE', 'delete'],
];

describe('kubelet API authorization attributes', () => {
  it.each(Object.entries(UPSTREAM))('%s → %j (upstream TestGetRequestAttributes)', (p, subs) => {
    for (const [method, verb] of UPSTREAM_VERBS) {
      expect(requestAttributes(user, method, p, 'test')).toEqual(
        subs.map((subresource) => ({ user, verb, apiVersion: 'v1', resource: 'nodes', subresource, name: 'test', path: p })),
      );
    }
  });

  it.each([
    ['/pods', ['pods', 'proxy']],
    ['/stats', ['stats']],
    ['/spec', ['proxy']],
    ['/runningPods', ['proxy']],
    ['/statsx', ['proxy']],
    ['/podsx', ['proxy']],
    ['/', ['proxy']],
  ])('%s → %j', (p, subs) => {
    expect(subresourcesFor(p)).toEqual(subs);
  });

  it('maps HTTP methods to verbs (HEAD and others: empty)', () => {
    const verbs = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'].map((m) => requestAttributes(user, m, '/run/a/b/c', 'n1')[0]!.verb);
    expect(verbs).toEqual(['get', 'create', 'update', 'patch', 'delete', '', '']);
    expect(requestAttributes(user, 'GET', '/pods', 'n1')).toEqual([
      { user, verb: 'get', apiVersion: 'v1', resource: 'nodes', subresource: 'pods', name: 'n1', path: '/pods' },
      { user, verb: 'get', apiVersion: 'v1', resource: 'nodes', subresource: 'proxy', name: 'n1', path: '/pods' },
    ]);
  });

  it('maps the percent-decoded path, as Go has it in r.URL.Path', () => {
    expect(decodedPath('/%70ods')).toBe('/pods');
    expect(subresourcesFor(decodedPath('/%73tats/summary'))).toEqual(['stats']);
    expect(decodedPath('/bad%zz')).toBe('/bad%zz');
  });
});

describe('the authorization loop', () => {
  const recorder = (allow: (a: RequestAttributes) => boolean) => {
    const asked: string[] = [];
    const authz = (a: RequestAttributes) => {
      asked.push(a.subresource);
      return { allowed: allow(a) };
    };
    return { asked, authz };
  };

  it('asks nodes/pods first and stops at the first allowed set', async () => {
    const attrs = requestAttributes(user, 'GET', '/pods', 'n1');
    const pods = recorder((a) => a.subresource === 'pods');
    expect(await authorize(pods.authz, attrs)).toBeUndefined();
    expect(pods.asked).toEqual(['pods']);
    const proxy = recorder((a) => a.subresource === 'proxy');
    expect(await authorize(proxy.authz, attrs)).toBeUndefined();
    expect(proxy.asked).toEqual(['pods', 'proxy']);
  });

  it('words a denial like upstream, naming every subresource asked', async () => {
    expect(await authorize(() => ({ allowed: false }), requestAttributes(user, 'GET', '/pods', 'n1'))).toEqual({
      status: 403,
      message: 'Forbidden (user=alice, verb=get, resource=nodes, subresource(s)=[pods proxy])\n',
      subresources: ['pods', 'proxy'],
    });
    expect(await authorize(() => ({ allowed: false }), requestAttributes(user, 'POST', '/exec/ns/p/c', 'n1'))).toMatchObject({
      status: 403,
      message: 'Forbidden (user=alice, verb=create, resource=nodes, subresource(s)=[proxy])\n',
    });
  });

  it('answers 500 "Authorization error" for the set the authorizer failed on, without asking further', async () => {
    const asked: string[] = [];
    const r = await authorize(
      (a) => {
        asked.push(a.subresource);
        if (a.subresource === 'healthz') return { allowed: false };
        throw new Error('apiserver down');
      },
      requestAttributes(user, 'GET', '/healthz', 'n1'),
    );
    expect(r).toMatchObject({ status: 500, message: 'Authorization error (user=alice, verb=get, resource=nodes, subresource=proxy)' });
    expect(asked).toEqual(['healthz', 'proxy']);
  });
});

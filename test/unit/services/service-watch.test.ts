/**
 * The Service table's informers over a fake API transport: one list+watch of Services and one of
 * EndpointSlices; watch events change the answers at once; a 403 on EndpointSlices (the Node
 * authorizer's default) is logged once as NDL_SERVICES_WATCH naming the RBAC fix, Service
 * addresses answer `unavailable` meanwhile, and the list is retried until it succeeds.
 */
import { describe, expect, it } from 'vitest';
import type { Logger } from '@nodelet/plugin-api/v1';
import type { KubeClients } from '../../../core/kube/index.ts';
import { NodeServiceResolver } from '../../../core/services/service-resolver.ts';
import { ServiceTable } from '../../../core/services/service-table.ts';
import { watchServices } from '../../../core/services/service-watch.ts';
import { until } from '../../harness/until.ts';
import { ep, NODE, service, slice } from './fixtures.ts';

type Handler = (type: string, obj: unknown) => void;

/** A transport whose lists answer from `lists` (a function may throw) and whose watches stay open, their handlers kept by path. */
function fakeClients(lists: Record<string, () => unknown>) {
  const watchers = new Map<string, Handler>();
  const transport = {
    request: (_method: string, path: string) => Promise.resolve().then(() => lists[path]!()),
    watch: (path: string, _q: unknown, onEvent: Handler) => {
      watchers.set(path, onEvent);
      return Promise.resolve(new AbortController());
    },
  };
  return { clients: { transport } as unknown as KubeClients, watchers };
}

function recordingLog() {
  const lines: { level: string; obj: object; msg?: string }[] = [];
  const log: Logger = {
    debug: () => undefined,
    info: (obj: object | string, msg?: string) =>
      void lines.push({ level: 'info', obj: typeof obj === 'string' ? {} : obj, msg: typeof obj === 'string' ? obj : msg }),
    warn: (obj: object | string, msg?: string) =>
      void lines.push({ level: 'warn', obj: typeof obj === 'string' ? {} : obj, msg: typeof obj === 'string' ? obj : msg }),
    error: () => undefined,
    child: () => log,
  };
  return { log, lines };
}

const SVC = '/api/v1/services';
const SLICES = '/apis/discovery.k8s.io/v1/endpointslices';
const VIP = '10.0.0.10';

describe('the Service and EndpointSlice informers', () => {
  it('fill the table from the lists, then apply watch events as they arrive', async () => {
    const { clients, watchers } = fakeClients({
      [SVC]: () => ({ items: [service('ns', 'web', { clusterIP: VIP })], metadata: { resourceVersion: '5' } }),
      [SLICES]: () => ({ items: [slice('ns', 'web', 'web-1', [ep('10.244.1.5')])], metadata: { resourceVersion: '5' } }),
    });
    const table = new ServiceTable(NODE);
    const resolver = new NodeServiceResolver({ table, clusterDomain: 'cluster.local', topology: { nodeName: NODE }, podDns: () => undefined });
    const watch = await watchServices({ clients, table, log: recordingLog().log });
    expect(resolver.resolve(VIP, 80)).toMatchObject({ kind: 'endpoint', address: '10.244.1.5' });
    await until('both watches open', () => watchers.size === 2, 5000);
    watchers.get(SLICES)!('MODIFIED', {
      ...slice('ns', 'web', 'web-1', [ep('10.244.1.6')]),
      metadata: { ...slice('ns', 'web', 'web-1', []).metadata, resourceVersion: '6' },
    });
    expect(resolver.resolve(VIP, 80)).toMatchObject({ kind: 'endpoint', address: '10.244.1.6' });
    watchers.get(SVC)!('DELETED', service('ns', 'web', { clusterIP: VIP }));
    expect(resolver.resolve(VIP, 80)).toEqual({ kind: 'direct' });
    watch.stop();
  });

  it('a 403 on EndpointSlices: logged once with the RBAC fix, Service addresses unavailable, retried until listed', async () => {
    let forbidden = 3;
    const { clients } = fakeClients({
      [SVC]: () => ({ items: [service('ns', 'web', { clusterIP: VIP })], metadata: { resourceVersion: '5' } }),
      [SLICES]: () => {
        if (forbidden-- > 0) {
          throw Object.assign(new Error('forbidden'), {
            httpStatus: 403,
            body: JSON.stringify({ message: 'endpointslices.discovery.k8s.io is forbidden: User "system:node:n1" cannot list resource "endpointslices"' }),
          });
        }
        return { items: [slice('ns', 'web', 'web-1', [ep('10.244.1.5')])], metadata: { resourceVersion: '5' } };
      },
    });
    const table = new ServiceTable(NODE);
    const resolver = new NodeServiceResolver({ table, clusterDomain: 'cluster.local', topology: { nodeName: NODE }, podDns: () => undefined });
    const { log, lines } = recordingLog();
    const watch = await watchServices({ clients, table, log, retryMs: 10 });
    const t = resolver.resolve(VIP, 80);
    expect(t.kind).toBe('unavailable');
    expect(t.kind === 'unavailable' && t.message).toContain('cannot list resource "endpointslices"');
    expect(t.kind === 'unavailable' && t.message).toContain('--clusterrole=system:node-proxier --group=system:nodes');
    await until('the slices listed after the retries', () => resolver.resolve(VIP, 80).kind === 'endpoint', 5000);
    const warnings = lines.filter((l) => l.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.obj).toMatchObject({ code: 'NDL_SERVICES_WATCH', status: 403 });
    expect(warnings[0]!.msg).toMatch(/^Services or EndpointSlices cannot be listed or watched: EndpointSlices: endpointslices.discovery.k8s.io is forbidden/);
    expect(lines.some((l) => l.level === 'info' && l.msg === 'EndpointSlices are listed and watched again')).toBe(true);
    watch.stop();
  });
});

/**
 * The route port between a container's worker and the provider (worker/service-route.mjs,
 * services-channel.ts), and preview2-shim's outgoing handler routed through it
 * (worker/shim-outgoing.mjs): answers asynchronously and to a thread blocked in Atomics.wait,
 * a router's error as `error`, authorities parsed as HTTP writes them.
 */
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import type { ServiceClient, ServiceRoute } from '@nodelet/plugin-api/v1';
import { openRouteChannel, type OutboundRouter } from '../src/services-channel.ts';
import { RouteClient, splitAuthority } from '../src/worker/service-route.mjs';
import { routedOutgoingHandler, type ShimRequest } from '../src/worker/shim-outgoing.mjs';
import { parseAllowedHosts } from '../src/outbound-hosts.mjs';
import type { WorkerRoute } from '../src/worker-protocol.ts';

const client: ServiceClient = { pod: { namespace: 'ns', name: 'p', uid: 'u' }, ip: '10.244.1.9' };
const web = { namespace: 'ns', name: 'web', port: '' };
/** web:80 → 10.244.1.5:8080; gone → refused; boom → throws; anything else as given. */
const router: OutboundRouter = (host, port) => {
  if (host === 'web') return { kind: 'connect', host: '10.244.1.5', port: 8080, service: web };
  if (host === 'gone') return { kind: 'refused', service: web, message: 'no ready endpoints' };
  if (host === 'boom') throw new Error('bad question');
  if (host === 'later') return Promise.resolve({ kind: 'connect', host: '10.244.1.6', port } satisfies ServiceRoute);
  return { kind: 'connect', host, port };
};

describe('the route port', () => {
  it('answers questions asynchronously, with the pod it was opened for, and a router error as `error`', async () => {
    const seen: ServiceClient[] = [];
    const ch = openRouteChannel((h, p, c, proto) => (seen.push(c), router(h, p, c, proto)), client);
    const routes = new RouteClient(ch.port);
    try {
      expect(await routes.route('web', 80)).toEqual({ kind: 'connect', host: '10.244.1.5', port: 8080, service: web });
      expect(await routes.route('later', 81)).toEqual({ kind: 'connect', host: '10.244.1.6', port: 81 });
      expect(await routes.route('gone', 80)).toEqual({ kind: 'refused', service: web, message: 'no ready endpoints' });
      expect(await routes.route('boom', 80)).toEqual({ kind: 'error', message: 'bad question' });
      expect(seen).toEqual([client, client, client, client]);
    } finally {
      ch.close();
      ch.port.close();
    }
  });

  it('answers a worker blocked in routeSync (Atomics.wait), from this thread', async () => {
    const ch = openRouteChannel(router, client);
    const url = new URL('../src/worker/service-route.mjs', import.meta.url).href;
    const worker = new Worker(
      `const { workerData, parentPort } = require('node:worker_threads');
       import(workerData.url).then(({ RouteClient }) => {
         const routes = new RouteClient(workerData.port);
         parentPort.postMessage([routes.routeSync('web', 80), routes.routeSync('gone', 80), routes.routeSync('later', 82)]);
       });`,
      { eval: true, workerData: { url, port: ch.port }, transferList: [ch.port] },
    );
    try {
      const answers = await new Promise<WorkerRoute[]>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      expect(answers).toEqual([
        { kind: 'connect', host: '10.244.1.5', port: 8080, service: web },
        { kind: 'refused', service: web, message: 'no ready endpoints' },
        { kind: 'connect', host: '10.244.1.6', port: 82 },
      ]);
    } finally {
      await worker.terminate();
      ch.close();
    }
  });

  it('splits authorities as HTTP writes them, with the scheme’s port by default', () => {
    expect(splitAuthority('web', 80)).toEqual({ host: 'web', port: 80 });
    expect(splitAuthority('web.ns.svc.cluster.local:8080', 80)).toEqual({ host: 'web.ns.svc.cluster.local', port: 8080 });
    expect(splitAuthority('10.0.0.10:443', 80)).toEqual({ host: '10.0.0.10', port: 443 });
    expect(splitAuthority('[fd00::a]:81', 80)).toEqual({ host: 'fd00::a', port: 81 });
    expect(splitAuthority('[fd00::a]', 443)).toEqual({ host: 'fd00::a', port: 443 });
    for (const bad of ['', 'web:0', 'web:70000', 'a:b:c', 'web:x', '[web]']) expect(splitAuthority(bad, 80), bad).toBeUndefined();
  });
});

describe("preview2-shim's outgoing handler, routed", () => {
  /** A shim request with `authority` and `scheme`, recording setAuthority. */
  const request = (authority: string | undefined, scheme: 'HTTP' | 'HTTPS' | null = 'HTTP') => {
    const r = {
      authority: () => authority,
      scheme: () => (scheme ? { tag: scheme } : undefined),
      setAuthority: (a: string | undefined) => void (authority = a),
    };
    return r satisfies ShimRequest;
  };
  const sent: (string | undefined)[] = [];
  const shim = { handle: (req: ShimRequest) => (sent.push(req.authority()), 'future') };
  const routes = (r: WorkerRoute) => ({ routeSync: () => r });

  it('sends to the endpoint the route names, unchanged when it goes as given (no scheme: https, port 443, as the shim)', () => {
    expect(routedOutgoingHandler(shim, routes({ kind: 'connect', host: '10.244.1.5', port: 8080 })).handle(request('web'))).toBe('future');
    expect(sent.at(-1)).toBe('10.244.1.5:8080');
    expect(routedOutgoingHandler(shim, routes({ kind: 'connect', host: 'example.com', port: 443 })).handle(request('example.com', null))).toBe('future');
    expect(sent.at(-1)).toBe('example.com');
  });

  it('answers the error-code of a route that connects nowhere, sending nothing', () => {
    const before = sent.length;
    const handle = (r: WorkerRoute) => routedOutgoingHandler(shim, routes(r)).handle(request('web'));
    expect(handle({ kind: 'refused', service: web, message: 'm' })).toEqual({ tag: 'err', val: { tag: 'connection-refused' } });
    expect(handle({ kind: 'unavailable', service: web, message: 'm' })).toEqual({ tag: 'err', val: { tag: 'destination-unavailable' } });
    expect(handle({ kind: 'not-found', name: 'web', message: 'm' })).toEqual({
      tag: 'err',
      val: { tag: 'DNS-error', val: { rcode: 'NXDOMAIN', infoCode: undefined } },
    });
    expect(handle({ kind: 'error', message: 'no answer' })).toEqual({ tag: 'err', val: { tag: 'internal-error', val: 'no answer' } });
    expect(handle({ kind: 'connect', host: 'fd00::5', port: 80 })).toMatchObject({ tag: 'err', val: { tag: 'internal-error' } });
    expect(sent.length).toBe(before);
  });

  it('checks the pod’s allow-list before routing: HTTP-request-denied outside it, nothing sent; a relative request only with `self`', () => {
    const denied: string[] = [];
    const policy = parseAllowedHosts(['http://web:80', 'https://*.example.com']);
    const handler = (p = policy) =>
      routedOutgoingHandler(shim, routes({ kind: 'connect', host: '10.244.1.5', port: 8080 }), { policy: p, denied: (u) => denied.push(u) });
    const before = sent.length;
    expect(handler().handle(request('web:8080'))).toEqual({ tag: 'err', val: { tag: 'HTTP-request-denied' } });
    expect(handler().handle(request('web', 'HTTPS'))).toEqual({ tag: 'err', val: { tag: 'HTTP-request-denied' } });
    expect(handler().handle(request(undefined))).toEqual({ tag: 'err', val: { tag: 'HTTP-request-denied' } });
    expect(sent.length).toBe(before);
    expect(denied).toEqual(['http://web:8080', 'https://web', 'http://']);
    expect(handler().handle(request('web'))).toBe('future');
    expect(sent.at(-1)).toBe('10.244.1.5:8080');
    expect(handler().handle(request('api.example.com', null))).toBe('future');
    expect(handler(parseAllowedHosts(['http://self'])).handle(request(undefined))).toBe('future');
  });
});

/** Probes and hooks through the pod controller and the container driver, with a fake provider and a local HTTP server the test controls. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { PodController } from '../../../core/pods/pod-controller.ts';
import { predicateAdmitHandler } from '../../../core/pods/admission.ts';
import { fixedAllocatable } from '../../../core/pods/admit-handler.ts';
import { ProbeManager } from '../../../core/probes/probe-manager.ts';
import { FakeEvents, FakeProvider, FakeSink, fakeSetup, memoryLogger } from '../pods/fakes.ts';

let server: Server;
let port = 0;
/** Status code per path; requests in arrival order. */
const codes: Record<string, number> = {};
const hits: string[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(req.url!);
    res.writeHead(codes[req.url!] ?? 200).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const controllers: PodController[] = [];
const probers: ProbeManager[] = [];
afterEach(async () => {
  await Promise.all(controllers.splice(0).map((c) => c.shutdown()));
  await Promise.all(probers.splice(0).map((p) => p.close()));
});

function harness() {
  const provider = new FakeProvider();
  const sink = new FakeSink();
  const events = new FakeEvents();
  const probes = new ProbeManager();
  probers.push(probes);
  const ctrl = new PodController({
    nodeName: 'node-a',
    hostIP: '127.0.0.1',
    log: memoryLogger(),
    route: () => ({ provider }),
    setup: fakeSetup(),
    sink,
    events,
    admitNode: { nodeName: 'node-a', nodeLabels: {}, allocatable: [fixedAllocatable({ cpu: '4', memory: '4Gi', pods: '110' })] },
    admitHandlers: [predicateAdmitHandler],
    resyncMs: 3_600_000,
    backoff: { initialMs: 60_000, maxMs: 120_000 },
    probes,
  });
  controllers.push(ctrl);
  return { provider, sink, events, ctrl };
}

const pod = (name: string, main: Partial<V1Container>, restartPolicy = 'Always'): V1Pod => ({
  metadata: { name, namespace: 'default', uid: `uid-${name}` },
  spec: {
    nodeName: 'node-a',
    hostNetwork: true,
    restartPolicy,
    terminationGracePeriodSeconds: 5,
    containers: [{ name: 'main', image: 'registry.test/m:v1', ...main }],
  },
});
const until = (fn: () => unknown, timeout = 10_000) =>
  vi.waitFor(
    () => {
      if (!fn()) throw new Error('not yet');
    },
    { timeout, interval: 20 },
  );
const cond = (s: { conditions?: { type: string; status: string }[] } | undefined, t: string) => s?.conditions?.find((c) => c.type === t)?.status;
const http = (path: string) => ({ httpGet: { port, path } });

describe('probes through the container driver', () => {
  it('readiness 503 keeps the pod Running but not Ready, 200 makes it Ready; status is written only on a change', async () => {
    codes['/ready-a'] = 503;
    const { sink, ctrl } = harness();
    ctrl.upsert(pod('ra', { readinessProbe: { ...http('/ready-a'), periodSeconds: 1 } }));
    await until(() => sink.last('default/ra')?.phase === 'Running' && hits.includes('/ready-a'));
    let s = sink.last('default/ra')!;
    expect(s.containerStatuses![0]).toMatchObject({ ready: false, started: true });
    expect(cond(s, 'Ready')).toBe('False');
    expect(cond(s, 'ContainersReady')).toBe('False');
    codes['/ready-a'] = 200;
    await until(() => cond(sink.last('default/ra'), 'Ready') === 'True');
    s = sink.last('default/ra')!;
    expect(s.containerStatuses![0]!.ready).toBe(true);
    expect(cond(s, 'ContainersReady')).toBe('True');
    const posts = sink.of('default/ra').length;
    const probed = hits.filter((h) => h === '/ready-a').length;
    await until(() => hits.filter((h) => h === '/ready-a').length >= probed + 2);
    expect(sink.of('default/ra').length).toBe(posts);
  });

  it('a failing liveness probe kills the container with upstream events and the restart policy restarts it', async () => {
    codes['/live-b'] = 500;
    const { provider, sink, events, ctrl } = harness();
    ctrl.upsert(pod('lb', { livenessProbe: { ...http('/live-b'), periodSeconds: 1, failureThreshold: 2, terminationGracePeriodSeconds: 3 } }));
    await until(() => (sink.last('default/lb')?.containerStatuses?.[0]?.restartCount ?? 0) >= 1);
    expect(provider.started[0]!.stoppedWith).toBe(3000); // the probe's terminationGracePeriodSeconds
    expect(events.lines()).toEqual(
      expect.arrayContaining([
        'Unhealthy: Liveness probe failed: HTTP probe failed with statuscode: 500',
        'Killing: Container main failed liveness probe, will be restarted',
      ]),
    );
  });

  it('with restartPolicy Never the killed container is not restarted and the event says so', async () => {
    codes['/live-c'] = 500;
    const { sink, events, ctrl } = harness();
    ctrl.upsert(pod('lc', { livenessProbe: { ...http('/live-c'), periodSeconds: 1, failureThreshold: 1 } }, 'Never'));
    await until(() => sink.last('default/lc')?.phase === 'Failed');
    expect(events.lines()).toContain('Killing: Container main failed liveness probe');
  });

  it('a startup probe gates liveness: no liveness check before startup succeeds', async () => {
    codes['/start-d'] = 503;
    codes['/live-d'] = 500;
    const { events, ctrl } = harness();
    ctrl.upsert(
      pod('sd', {
        startupProbe: { ...http('/start-d'), periodSeconds: 1, failureThreshold: 100 },
        livenessProbe: { ...http('/live-d'), periodSeconds: 1, failureThreshold: 1 },
      }),
    );
    await until(() => hits.filter((h) => h === '/start-d').length >= 3);
    expect(hits).not.toContain('/live-d');
    codes['/start-d'] = 200;
    await until(() => events.lines().includes('Killing: Container main failed liveness probe, will be restarted'));
  });

  it('a failed postStart hook is reported, the container is killed and restarted', async () => {
    const { sink, events, ctrl } = harness();
    ctrl.upsert(pod('pe', { lifecycle: { postStart: { httpGet: { port: 1, path: '/hook' } } } }));
    await until(() => (sink.last('default/pe')?.containerStatuses?.[0]?.restartCount ?? 0) >= 1);
    const lines = events.lines();
    expect(lines.find((l) => l.startsWith('FailedPostStartHook: '))).toMatch(
      /^FailedPostStartHook: HTTP lifecycle hook \(\/hook\) for Container "main" in Pod "pe_default\(uid-pe\)" failed - error: Get "http:\/\/127\.0\.0\.1:1\/hook": dial tcp 127\.0\.0\.1:1: connect: connection refused$/,
    );
    expect(lines).toContain('Killing: FailedPostStartHook');
  });

  it('preStop httpGet reaches the server before the container is stopped', async () => {
    const { provider, sink, ctrl } = harness();
    ctrl.upsert(pod('ps', { lifecycle: { preStop: { httpGet: { port, path: '/prestop-f' } } } }));
    await until(() => sink.last('default/ps')?.phase === 'Running');
    const c = provider.latest('main');
    let stoppedAfterHook: boolean | undefined;
    const stop = c.stop.bind(c);
    c.stop = async (g: number) => {
      stoppedAfterHook = hits.includes('/prestop-f');
      return stop(g);
    };
    await ctrl.shutdown();
    expect(stoppedAfterHook).toBe(true);
  });

  it('an exec probe on a provider without exec fails with a clear Unhealthy message', async () => {
    const { sink, events, ctrl } = harness();
    ctrl.upsert(pod('ex', { readinessProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 1 } }));
    await until(() => events.lines().includes('Unhealthy: Readiness probe failed: exec probes are not supported by provider "fake"'));
    expect(sink.last('default/ex')?.containerStatuses?.[0]?.ready).toBe(false);
  });
});

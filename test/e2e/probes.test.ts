/**
 * Probes and lifecycle hooks end to end: `hostNetwork: true` WASI pods (the
 * sleeping fixture) whose probes and hooks target a small HTTP server this
 * test runs on 127.0.0.1 and controls (probes reach a pod without a pod IP at
 * 127.0.0.1, see core/probes/target-host.ts).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { V1Container, V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Server as GrpcServer, ServerCredentials } from '@grpc/grpc-js';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';
import { kubeletGet } from './support/kubelet-api.ts';

describe('probes and lifecycle hooks on nodelet', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'probes-n1';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  let sleep = '';
  let server: Server;
  let port = 0;
  /** Per path: the status to answer (default 200); and every request, in order. */
  const codes: Record<string, number> = {};
  const hits: { path: string; at: number }[] = [];
  /** `/ready` answers 503 for 5 s from its first request, then 200. */
  let firstReady = 0;
  /** What the pod object looked like when `/prestop` arrived (read before answering). */
  let atPreStop: V1Pod | undefined | null;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const now = Date.now();
      hits.push({ path: req.url!, at: now });
      if (req.url === '/ready') {
        firstReady ||= now;
        return res.writeHead(now - firstReady < 5000 ? 503 : 200).end('ok');
      }
      if (req.url === '/prestop') {
        // nodelet waits for this answer before it stops the container: the pod must still be there
        void k.core
          .readNamespacedPod({ name: 'prestop', namespace: ns })
          .then(
            (p) => (atPreStop = p as V1Pod),
            () => (atPreStop = null),
          )
          .finally(() => res.writeHead(200).end('ok'));
        return;
      }
      res.writeHead(codes[req.url!] ?? 200).end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    reg = await startRegistry();
    sleep = await pushModule(reg, 'sleep');
    nodelet = await startNodelet(info, nodeName);
    ns = await podNamespace(k.core, 'probes');
    await waitNodeReady(k.core, nodeName);
  });
  afterAll(async () => {
    await nodelet?.dispose();
    await reg?.stop();
    server?.closeAllConnections();
    server?.close();
  });

  const create = (name: string, main: Partial<V1Container>, spec: Partial<V1PodSpec> = {}) =>
    k.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name },
        spec: {
          tolerations: [WASM_TOLERATION],
          nodeSelector: { 'kubernetes.io/hostname': nodeName },
          hostNetwork: true,
          terminationGracePeriodSeconds: 10,
          containers: [{ name: 'main', image: sleep, args: ['3600'], ...main }],
          ...spec,
        } as V1PodSpec,
      },
    });
  const until = (name: string, what: string, ok: (p: V1Pod) => boolean, ms = 60_000) => podUntil(k.core, ns, name, what, ok, ms);
  const cond = (p: V1Pod, t: string) => p.status?.conditions?.find((c) => c.type === t)?.status;
  const notes = async (name: string) =>
    (await k.core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.name=${name}` })).items.map((e) => `${e.reason}: ${e.message}`);
  const httpGet = (path: string) => ({ httpGet: { port, path } });

  it('readiness 503 for the first 5 s: the pod is Running but not Ready, then Ready', async () => {
    await create('ready', { readinessProbe: { ...httpGet('/ready'), periodSeconds: 1 } });
    const running = await until('ready', 'Running while not Ready', (p) => p.status?.phase === 'Running' && hits.some((h) => h.path === '/ready'));
    expect(cond(running, 'Ready')).toBe('False');
    expect(cond(running, 'ContainersReady')).toBe('False');
    expect(running.status?.containerStatuses?.[0]).toMatchObject({ ready: false, started: true });
    const ready = await until('ready', 'Ready', (p) => cond(p, 'Ready') === 'True');
    expect(cond(ready, 'ContainersReady')).toBe('True');
    expect(ready.status?.containerStatuses?.[0]?.ready).toBe(true);
    // Events are sent one at a time after the status (as upstream's broadcaster): wait for them.
    const readyNotes = await eventually(
      'Unhealthy event',
      async () => ((n) => (n.some((l) => l.startsWith('Unhealthy: ')) ? n : undefined))(await notes('ready')),
      10_000,
    );
    expect(readyNotes).toContain('Unhealthy: Readiness probe failed: HTTP probe failed with statuscode: 503');
  });

  it('a liveness probe that starts failing restarts the container: restartCount rises, upstream event text', async () => {
    await create('live', { livenessProbe: { ...httpGet('/live'), periodSeconds: 1, failureThreshold: 2, terminationGracePeriodSeconds: 2 } });
    await until('live', 'Running', (p) => p.status?.phase === 'Running');
    codes['/live'] = 500;
    await until('live', 'restartCount >= 1', (p) => (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1);
    await eventually(
      'liveness events',
      async () => {
        const n = await notes('live');
        return (
          n.includes('Unhealthy: Liveness probe failed: HTTP probe failed with statuscode: 500') &&
          n.includes('Killing: Container main failed liveness probe, will be restarted')
        );
      },
      20_000,
    );
  });

  it('with a startupProbe the liveness probe does not run before startup succeeds', async () => {
    codes['/startup'] = 503;
    codes['/gated-live'] = 500;
    await create('gated', {
      startupProbe: { ...httpGet('/startup'), periodSeconds: 1, failureThreshold: 600 },
      livenessProbe: { ...httpGet('/gated-live'), periodSeconds: 1, failureThreshold: 1 },
    });
    await eventually('three startup checks', async () => hits.filter((h) => h.path === '/startup').length >= 3, 60_000);
    const p = (await k.core.readNamespacedPod({ name: 'gated', namespace: ns })) as V1Pod;
    expect(p.status?.containerStatuses?.[0]?.started).toBe(false);
    expect(hits.some((h) => h.path === '/gated-live')).toBe(false);
    codes['/startup'] = 200;
    await until('gated', 'restarted by liveness after startup', (p) => (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1);
  });

  it('preStop httpGet is received before the container is stopped', async () => {
    await create('prestop', { lifecycle: { preStop: httpGet('/prestop') } });
    await until('prestop', 'Running', (p) => p.status?.phase === 'Running');
    await k.core.deleteNamespacedPod({ name: 'prestop', namespace: ns });
    await eventually('preStop received and answered', async () => atPreStop !== undefined, 30_000);
    expect(atPreStop).not.toBeNull();
    expect(atPreStop!.metadata?.deletionTimestamp).toBeDefined();
    expect(atPreStop!.status?.containerStatuses?.[0]?.state?.running).toBeDefined();
    await eventually(
      'pod gone',
      async () =>
        await k.core.readNamespacedPod({ name: 'prestop', namespace: ns }).then(
          () => false,
          () => true,
        ),
      30_000,
    );
  });

  it('a failing postStart hook: FailedPostStartHook, the container is killed and restarted', async () => {
    await create('poststart', { lifecycle: { postStart: { httpGet: { port: 1, path: '/never' } } } });
    await until('poststart', 'restartCount >= 1', (p) => (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1);
    const n = await eventually(
      'FailedPostStartHook and Killing events',
      async () =>
        ((l) => (l.some((x) => x.startsWith('FailedPostStartHook: ')) && l.includes('Killing: FailedPostStartHook') ? l : undefined))(await notes('poststart')),
      10_000,
    );
    expect(n.find((l) => l.startsWith('FailedPostStartHook: '))).toMatch(/HTTP lifecycle hook \(\/never\) for Container "main" in Pod "poststart_/);
    expect(n).toContain('Killing: FailedPostStartHook');
  });

  it('an exec readiness probe on the WASI provider fails with the documented message; the pod stays not Ready', async () => {
    await create('exec', { readinessProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 1 } });
    await until('exec', 'Running', (p) => p.status?.phase === 'Running');
    await eventually(
      'exec probe event',
      async () => (await notes('exec')).includes('Unhealthy: Readiness probe failed: exec probes are not supported by provider "wasi"'),
      20_000,
    );
    const p = (await k.core.readNamespacedPod({ name: 'exec', namespace: ns })) as V1Pod;
    expect(cond(p, 'Ready')).toBe('False');
  });
  // Read as the apiserver would (its kubelet client certificate): the apiserver does not proxy to a loopback node address (see metrics.test.ts).
  it('grpc and tcpSocket readiness probes make pods Ready (grpc.health.v1.Health/Check SERVING; a TCP connect)', async () => {
    const grpc = new GrpcServer();
    grpc.addService(
      {
        Check: {
          path: '/grpc.health.v1.Health/Check',
          requestStream: false,
          responseStream: false,
          requestSerialize: () => Buffer.alloc(0),
          requestDeserialize: () => ({}), // an object: grpc-js refuses a falsy request message
          responseSerialize: () => Buffer.from([0x08, 1]), // status: SERVING
          responseDeserialize: () => ({}),
        },
      },
      { Check: (_call: unknown, cb: (e: null, v: object) => void) => cb(null, {}) },
    );
    const gport = await new Promise<number>((res, rej) => grpc.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))));
    try {
      await create('grpc', { readinessProbe: { grpc: { port: gport }, periodSeconds: 1 } });
      await create('tcp', { ports: [{ name: 'web', containerPort: port }], readinessProbe: { tcpSocket: { port: 'web' }, periodSeconds: 1 } });
      await until('grpc', 'Ready', (p) => cond(p, 'Ready') === 'True');
      await until('tcp', 'Ready', (p) => cond(p, 'Ready') === 'True');
    } finally {
      grpc.forceShutdown();
    }
  });

  it('/metrics/probes counts prober_probe_total', async () => {
    const r = await kubeletGet(nodelet.port, '/metrics/probes', info.caCert, { cert: info.kubeletClientCert, key: info.kubeletClientKey });
    expect(r.status).toBe(200);
    const counted = (pod: string, type: string, result: string) =>
      r.body
        .split('\n')
        .some(
          (l) =>
            l.startsWith('prober_probe_total{') &&
            [`pod="${pod}"`, `probe_type="${type}"`, `result="${result}"`, `namespace="${ns}"`].every((x) => l.includes(x)) &&
            /\} [1-9]\d*$/.test(l),
        );
    expect(counted('exec', 'Readiness', 'failed')).toBe(true);
    expect(counted('ready', 'Readiness', 'successful')).toBe(true);
    expect(counted('live', 'Liveness', 'failed')).toBe(true); // kept across the container's restarts
  });
});

/**
 * Sidecar containers (init containers with `restartPolicy: Always`, KEP-753)
 * and container restart rules (KEP-5307) on nodelet, against the real control
 * plane with Wasm pods. The cases are ported from upstream's node e2e tests,
 * test/e2e_node/container_lifecycle_test.go (k8s.io/kubernetes v1.36.3); each
 * names the upstream case it comes from.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { V1Container, V1ContainerStatus, V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

describe('sidecar containers and restart rules on nodelet', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'sidecars-n1';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  const img: Record<string, string> = {};
  let server: Server;
  let port = 0;
  /** Per path: the status the test's HTTP server answers (default 200). */
  const codes: Record<string, number> = {};

  beforeAll(async () => {
    server = createServer((req, res) => res.writeHead(codes[req.url!] ?? 200).end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    reg = await startRegistry();
    for (const m of ['sidecar', 'sleep', 'exit-code']) img[m] = await pushModule(reg, m);
    nodelet = await startNodelet(info, nodeName);
    ns = await podNamespace(k.core, 'sidecars');
    await waitNodeReady(k.core, nodeName);
  });
  afterAll(async () => {
    await nodelet?.dispose();
    await reg?.stop();
    server?.closeAllConnections();
    server?.close();
  });

  const create = (name: string, spec: Partial<V1PodSpec>) =>
    k.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name },
        spec: {
          tolerations: [WASM_TOLERATION],
          nodeSelector: { 'kubernetes.io/hostname': nodeName },
          terminationGracePeriodSeconds: 10,
          containers: [],
          ...spec,
        } as V1PodSpec,
      },
    });
  const until = (name: string, what: string, ok: (p: V1Pod) => boolean, ms = 60_000) => podUntil(k.core, ns, name, what, ok, ms);
  const logs = (pod: string, container: string) => k.core.readNamespacedPodLog({ name: pod, namespace: ns, container });
  const init = (p: V1Pod, name: string) => p.status?.initContainerStatuses?.find((c) => c.name === name) as V1ContainerStatus;
  const app = (p: V1Pod, name: string) => p.status?.containerStatuses?.find((c) => c.name === name) as V1ContainerStatus;
  const cond = (p: V1Pod, type: string) => p.status?.conditions?.find((c) => c.type === type);
  const at = (t: Date | string | undefined) => new Date(t as string).getTime();
  const sidecar = (name: string, image: string, more: Partial<V1Container> = {}): V1Container => ({ name, image, restartPolicy: 'Always', ...more });

  // upstream: "using a restartable init container in a Pod with restartPolicy=Never / a restartable init container runs
  // continuously / should complete a Pod successfully and produce log" and "A pod with restartable init containers is
  // terminating / The containers exit successfully / should terminate sidecars in reverse order after all main containers
  // have exited".
  it('a Job-style pod: the main container reads what its sidecar wrote, exits 0, the sidecars stop last first, the pod Succeeds', async () => {
    await create('job', {
      restartPolicy: 'Never',
      volumes: [{ name: 'shared', emptyDir: {} }],
      initContainers: [
        sidecar('first', img.sidecar, { args: ['serve', '/shared/first', 'first ready'], volumeMounts: [{ name: 'shared', mountPath: '/shared' }] }),
        // Its preStop holds its stop for 3 s: the first sidecar, stopped after it, ends at least that late.
        sidecar('second', img.sidecar, {
          args: ['serve', '/shared/second', 'from the sidecar'],
          volumeMounts: [{ name: 'shared', mountPath: '/shared' }],
          lifecycle: { preStop: { sleep: { seconds: 3 } } },
        }),
      ],
      containers: [{ name: 'main', image: img.sidecar, args: ['await', '/shared/second', '30'], volumeMounts: [{ name: 'shared', mountPath: '/shared' }] }],
    });
    const p = await until('job', 'Succeeded', (p) => p.status?.phase === 'Succeeded', 90_000);
    expect(await logs('job', 'main')).toContain('content /shared/second: from the sidecar');
    expect(await logs('job', 'second')).toContain('wrote /shared/second');
    const [first, second, main] = [init(p, 'first'), init(p, 'second'), app(p, 'main')];
    expect(main.state?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    // the sidecars ran beside the main container, were not restarted, and were stopped after it
    for (const s of [first, second]) {
      expect(s.restartCount).toBe(0);
      expect(s.state?.terminated).toBeDefined();
      expect(at(s.state!.terminated!.startedAt)).toBeLessThanOrEqual(at(main.state!.terminated!.startedAt));
      expect(at(s.state!.terminated!.finishedAt)).toBeGreaterThanOrEqual(at(main.state!.terminated!.finishedAt));
    }
    // reverse order: the first sidecar waited for the second (held by its 3 s preStop)
    expect(at(first.state!.terminated!.finishedAt)).toBeGreaterThanOrEqual(at(second.state!.terminated!.finishedAt));
    expect(at(first.state!.terminated!.finishedAt) - at(main.state!.terminated!.finishedAt)).toBeGreaterThanOrEqual(2000);
    expect(cond(p, 'Ready')).toMatchObject({ status: 'False', reason: 'PodCompleted' });
  });

  // upstream: "using a restartable init container in a Pod with restartPolicy=Never / a restartable init container
  // starts and exits with exit code 1 continuously / should restart a restartable init container before the regular
  // container started / after the regular container started / should complete a Pod successfully and produce log".
  it('a sidecar that exits is restarted in a Never pod, and the pod still Succeeds', async () => {
    await create('flaky', {
      restartPolicy: 'Never',
      initContainers: [sidecar('flaky', img['exit-code'], { args: ['1'] })],
      containers: [{ name: 'main', image: img.sleep, args: ['15'] }],
    });
    const p = await until('flaky', 'Succeeded', (p) => p.status?.phase === 'Succeeded', 90_000);
    expect(init(p, 'flaky').restartCount).toBeGreaterThanOrEqual(1);
    expect(app(p, 'main').state?.terminated?.exitCode).toBe(0);
    expect(await logs('flaky', 'main')).toContain('tick 15');
  });

  // upstream: "running restartable init containers with startup probes / should launch restartable init containers
  // serially considering the startup probe"; the pod's readiness includes the sidecar's (status/generate.go).
  it("the next init container waits for a sidecar's startup probe; the pod's Ready waits for the sidecar's readiness", async () => {
    codes['/sc-startup'] = 503;
    codes['/sc-ready'] = 503;
    const probe = (path: string) => ({ httpGet: { port, path }, periodSeconds: 1, failureThreshold: 600 });
    await create('gated', {
      restartPolicy: 'Always',
      hostNetwork: true, // the probes reach the test's server on 127.0.0.1
      initContainers: [
        sidecar('proxy', img.sleep, { args: ['3600'], startupProbe: probe('/sc-startup'), readinessProbe: probe('/sc-ready') }),
        { name: 'setup', image: img['exit-code'], args: ['0'] },
      ],
      containers: [{ name: 'main', image: img.sleep, args: ['3600'] }],
    });
    let p = await until('gated', 'proxy running', (p) => !!init(p, 'proxy')?.state?.running);
    await new Promise((r) => setTimeout(r, 4000)); // four failing startup checks
    p = await until('gated', 'still initializing', () => true);
    expect(init(p, 'proxy').started).toBe(false);
    expect(init(p, 'setup').state?.waiting).toBeDefined();
    expect(cond(p, 'Initialized')).toMatchObject({ status: 'False', reason: 'ContainersNotInitialized' });
    codes['/sc-startup'] = 200;
    p = await until('gated', 'main running', (p) => !!app(p, 'main')?.state?.running);
    expect(init(p, 'proxy').started).toBe(true);
    expect(init(p, 'setup').state?.terminated?.exitCode).toBe(0);
    expect(at(init(p, 'setup').state!.terminated!.startedAt)).toBeGreaterThanOrEqual(at(init(p, 'proxy').state!.running!.startedAt));
    expect(p.status?.phase).toBe('Running');
    expect(cond(p, 'Ready')).toMatchObject({ status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [proxy]' });
    codes['/sc-ready'] = 200;
    p = await until('gated', 'Ready', (p) => cond(p, 'Ready')?.status === 'True');
    expect(init(p, 'proxy')).toMatchObject({ ready: true, started: true, restartCount: 0 });
  });

  // upstream: "using a restartable init container in a Pod with restartPolicy=Never / an Init container after
  // restartable init container fails / should mark a Pod as failed and produce log".
  it('an init container after a sidecar fails in a Never pod: the pod Fails and the sidecar is stopped', async () => {
    await create('broken', {
      restartPolicy: 'Never',
      initContainers: [sidecar('proxy', img.sleep, { args: ['3600'] }), { name: 'check', image: img['exit-code'], args: ['3'] }],
      containers: [{ name: 'main', image: img.sleep, args: ['3600'] }],
    });
    // upstream getPhase says Failed at once; the sidecar's stop is posted after it
    const p = await until('broken', 'Failed, the sidecar stopped', (p) => p.status?.phase === 'Failed' && !!init(p, 'proxy')?.state?.terminated);
    expect(init(p, 'check').state?.terminated?.exitCode).toBe(3);
    expect(app(p, 'main').state?.waiting).toBeDefined();
  });

  // KEP-5307 (container restart rules): upstream test/e2e/common/node/container_restart_policy.go, "Container Restart
  // Rules", one case each.
  const rule42 = [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }];
  const rulesCases: { upstream: string; pod: string; exit: string; container?: object; restarts: boolean }[] = [
    {
      upstream: 'should restart container on rule match',
      pod: 'Never',
      exit: '42',
      container: { restartPolicy: 'Never', restartPolicyRules: rule42 },
      restarts: true,
    },
    {
      upstream: 'should not restart container on rule mismatch, container restart policy Never',
      pod: 'Never',
      exit: '1',
      container: { restartPolicy: 'Never', restartPolicyRules: rule42 },
      restarts: false,
    },
    {
      upstream: 'should restart container on container-level restart policy Never',
      pod: 'Always',
      exit: '1',
      container: { restartPolicy: 'Never' },
      restarts: false,
    },
    {
      upstream: 'should restart container on container-level restart policy Always',
      pod: 'Never',
      exit: '1',
      container: { restartPolicy: 'Always' },
      restarts: true,
    },
    {
      upstream: 'should restart container on pod-level restart policy Always when no container-level restart policy',
      pod: 'Always',
      exit: '1',
      restarts: true,
    },
  ];
  rulesCases.forEach((c, i) => {
    it(`restart rules: ${c.upstream} (pod ${c.pod}, exit ${c.exit}: ${c.restarts ? 'restarted' : 'not restarted'})`, async () => {
      const name = `rules-${i}`;
      await create(name, { restartPolicy: c.pod, containers: [{ name: 'main', image: img['exit-code'], args: [c.exit], ...c.container } as V1Container] });
      if (c.restarts) {
        const p = await until(name, 'restarted', (p) => (app(p, 'main')?.restartCount ?? 0) >= 1);
        expect(p.status?.phase).toBe('Running');
        expect(app(p, 'main').lastState?.terminated?.exitCode).toBe(Number(c.exit));
      } else {
        const p = await until(name, 'Failed', (p) => p.status?.phase === 'Failed');
        expect(app(p, 'main')).toMatchObject({ restartCount: 0, state: { terminated: { exitCode: Number(c.exit) } } });
      }
    });
  });
});

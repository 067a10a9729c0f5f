/**
 * A PodProvider end to end: the providers directory holds the WASI provider
 * (the default, container-runtime provider) and the out-of-tree pod provider
 * `examples/provider-http-probe`. Pods of its RuntimeClass are handed over
 * whole (createPod/getPodStatus/deletePod); their status, events and logs
 * reach the API server and `kubectl logs` like any pod's.
 */
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, waitNodeReady, podUntil } from './support/kube.ts';
import { kubectl } from './support/kubectl.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

const REPO = resolve(import.meta.dirname, '..', '..');

describe('a PodProvider (http-probe) routed by RuntimeClass', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'podprov-n1';
  const rc = `http-probe-${Math.random().toString(36).slice(2, 7)}`;
  const hits = new Map<string, number>();
  let server: Server;
  let base = '';
  let nodelet: NodeletProcess;
  let ns: string;
  let providersDir: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = req.url ?? '/';
      const n = (hits.get(path) ?? 0) + 1;
      hits.set(path, n);
      if (path === '/ok') return res.end('ok');
      if (path === '/flaky') return n <= 2 ? res.writeHead(503).end('warming up') : res.end('ready');
      res.writeHead(500).end('broken');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    providersDir = mkdtempSync(join(tmpdir(), 'nodelet-podproviders-'));
    symlinkSync(join(REPO, 'providers', 'wasi'), join(providersDir, 'wasi'));
    symlinkSync(join(REPO, 'examples', 'provider-http-probe'), join(providersDir, 'http-probe'));
    await k.node.createRuntimeClass({ body: { apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: rc }, handler: 'http-probe' } });
    // The provider's configuration, as an operator gives it: probes may reach 127.0.0.1 only.
    writeFileSync(join(providersDir, 'http-probe.yaml'), 'allowHosts:\n  - 127.0.0.1\n');
    nodelet = await startNodelet(info, nodeName, [`--providers-dir=${providersDir}`, `--provider-config=http-probe=${join(providersDir, 'http-probe.yaml')}`]);
    ns = await podNamespace(k.core, 'podprov');
    await waitNodeReady(k.core, nodeName);
  });

  afterAll(async () => {
    await nodelet?.dispose();
    await k.node.deleteRuntimeClass({ name: rc }).catch(() => undefined);
    server?.closeAllConnections();
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
    if (providersDir) rmSync(providersDir, { recursive: true, force: true });
  });

  const create = (name: string, spec: Partial<V1PodSpec>) =>
    k.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name },
        spec: { nodeName, runtimeClassName: rc, tolerations: [WASM_TOLERATION], restartPolicy: 'Never', containers: [], ...spec } as V1PodSpec,
      },
    });
  const until = (name: string, what: string, ok: (p: V1Pod) => boolean, ms = 90_000) => podUntil(k.core, ns, name, what, ok, ms);
  const finished = (p: V1Pod) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

  it('runs a probe pod (init + app container) to Succeeded, with every attempt in kubectl logs', async () => {
    await create('probe-ok', {
      initContainers: [{ name: 'wait', image: `${base}/ok` }],
      containers: [{ name: 'web', image: `${base}/flaky`, args: ['--interval=$(EVERY)', '--contains=ready'], env: [{ name: 'EVERY', value: '200ms' }] }],
    });
    const p = await until('probe-ok', 'finished', finished);
    expect(p.status?.phase).toBe('Succeeded');
    expect(p.status?.initContainerStatuses?.[0]).toMatchObject({ name: 'wait', state: { terminated: { exitCode: 0, reason: 'Completed' } } });
    expect(p.status?.containerStatuses?.[0]).toMatchObject({ name: 'web', restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } });
    expect(p.status?.containerStatuses?.[0]?.containerID).toMatch(/^http-probe:\/\//);
    expect(p.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'PodCompleted' });
    const logs = kubectl(info, ['logs', '-n', ns, 'probe-ok', '-c', 'web']);
    expect(logs.stderr).toBe('');
    expect(logs.stdout.trim().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^GET ${base}/flaky → 503 Service Unavailable \\(\\d+ ms\\); body lacks "ready"$`)),
      expect.stringMatching(/→ 503 Service Unavailable/),
      expect.stringMatching(/→ 200 OK \(\d+ ms\)$/),
    ]);
    expect(kubectl(info, ['logs', '-n', ns, 'probe-ok', '-c', 'wait']).stdout).toMatch(/^GET .*\/ok → 200 OK/);
  });

  it('holds probes to the allow-list of its --provider-config file: a host not listed is refused (UnsupportedPodSpec)', async () => {
    const port = new URL(base).port;
    await create('probe-elsewhere', { containers: [{ name: 'x', image: `http://localhost:${port}/ok` }] });
    const refused = await until('probe-elsewhere', 'finished', finished);
    expect(refused.status).toMatchObject({
      phase: 'Failed',
      reason: 'UnsupportedPodSpec',
      message: 'provider "http-probe" cannot run this pod: container "x": host "localhost" is not allowed on this node (allowed: 127.0.0.1)',
    });
  });

  it('fails a pod whose probe runs out of attempts, and one the provider refuses (UnsupportedPodSpec)', async () => {
    await create('probe-fails', { containers: [{ name: 'api', image: `${base}/broken`, args: ['--attempts=2', '--interval=100ms'] }] });
    await create('probe-refused', { containers: [{ name: 'x', image: 'busybox:1.36' }] });
    const fails = await until('probe-fails', 'finished', finished);
    expect(fails.status).toMatchObject({ phase: 'Failed', reason: 'Error' });
    expect(fails.status?.message).toContain('container "api": no answer matching 2xx after 2 attempts');
    expect(fails.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
    const refused = await until('probe-refused', 'finished', finished);
    expect(refused.status).toMatchObject({
      phase: 'Failed',
      reason: 'UnsupportedPodSpec',
      message: 'provider "http-probe" cannot run this pod: container "x": image "busybox:1.36" is not an http(s) URL',
    });
    const events = await eventually('UnsupportedPodSpec event', async () => {
      const list = await k.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=probe-refused,reason=UnsupportedPodSpec' });
      return list.items.length ? list.items : undefined;
    });
    expect(events[0]!.type).toBe('Warning');
  });

  it('deletes a running probe pod through deletePod: the pod object goes away', async () => {
    await create('probe-forever', { restartPolicy: 'Always', containers: [{ name: 'watch', image: `${base}/broken`, args: ['--interval=100ms'] }] });
    await until('probe-forever', 'Running', (p) => p.status?.phase === 'Running');
    await k.core.deleteNamespacedPod({ name: 'probe-forever', namespace: ns, gracePeriodSeconds: 5 });
    await eventually(
      'probe-forever deleted',
      async () => {
        const gone = await k.core.readNamespacedPod({ name: 'probe-forever', namespace: ns }).then(
          () => false,
          () => true,
        );
        return gone;
      },
      60_000,
    );
    const seen = hits.get('/broken') ?? 0;
    await new Promise((r) => setTimeout(r, 500)); // a fixed wait: no probe may reach the endpoint after the deletion
    expect(hits.get('/broken') ?? 0).toBe(seen);
  });

  it('logged no unusable provider status and no failed pod sync', () => {
    const msgs = readFileSync(nodelet.logFile, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => (JSON.parse(l) as { msg?: string }).msg ?? '');
    expect(msgs.filter((m) => m.startsWith('provider status unusable') || m === 'pod sync failed')).toEqual([]);
    expect(msgs).toContain('http-probe provider ready');
  });
});

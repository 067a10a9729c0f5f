/**
 * Metrics end to end: nodelet's /metrics scraped with a service-account token
 * that RBAC grants nodes/metrics, and `kubectl top` through the real
 * metrics-server v0.9.0 (aggregation layer), which scrapes nodelet's
 * /metrics/resource with its own service-account token (TokenReview +
 * SubjectAccessReview on nodelet).
 */
import type { V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { startMetricsServer, type RunningMetricsServer } from '../peers/metrics-server.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { kubectl } from './support/kubectl.ts';
import { kubeletGet } from './support/kubelet-api.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

/** `kubectl top` rows: name → [cpu millicores, memory bytes] (columns found by header: node rows also have percentages). */
function topRows(out: string): Map<string, [number, number]> {
  const rows = new Map<string, [number, number]>();
  const [header, ...lines] = out.trim().split('\n');
  const cols = header!.trim().split(/\s+/);
  const ci = cols.indexOf('CPU(cores)');
  const mi = cols.indexOf('MEMORY(bytes)');
  for (const line of lines) {
    const f = line.trim().split(/\s+/);
    const [name, cpu, mem] = [f[0], f[ci], f[mi]];
    if (!name || !cpu || !mem) continue;
    const milli = cpu.endsWith('m') ? Number(cpu.slice(0, -1)) : Number(cpu) * 1000;
    const unit = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 }[mem.slice(-2)] ?? 1;
    rows.set(name, [milli, Number(mem.replace(/[KMG]i$/, '')) * unit]);
  }
  return rows;
}

describe('metrics and kubectl top', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'metrics-n1';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ms: RunningMetricsServer;
  let ns: string;
  const ok = (args: string[]) => {
    const r = kubectl(info, args);
    if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };

  beforeAll(async () => {
    reg = await startRegistry();
    const img = { loop: await pushModule(reg, 'loop'), sleep: await pushModule(reg, 'sleep'), grow: await pushModule(reg, 'grow') };
    ms = await startMetricsServer(info, { resolution: '10s', verifyKubeletCa: true });
    nodelet = await startNodelet(info, nodeName);
    ns = await podNamespace(k.core, 'metrics');
    await waitNodeReady(k.core, nodeName);
    const pod = (name: string, image: string, args: string[]) =>
      k.core.createNamespacedPod({
        namespace: ns,
        body: {
          metadata: { name },
          spec: {
            tolerations: [WASM_TOLERATION],
            nodeSelector: { 'kubernetes.io/hostname': nodeName },
            containers: [{ name: 'main', image, args }],
          } as V1PodSpec,
        },
      });
    await pod('busy', img.loop, []);
    await pod('idle', img.sleep, ['3600']);
    await pod('grower', img.grow, ['48']);
    for (const p of ['busy', 'idle', 'grower']) await podUntil(k.core, ns, p, 'Running', (x) => x.status?.phase === 'Running');
  });
  afterAll(async () => {
    kubectl(info, ['delete', 'clusterrolebinding', 'metrics-e2e-prom', '--ignore-not-found']);
    kubectl(info, ['delete', 'clusterrole', 'metrics-e2e-prom', '--ignore-not-found']);
    await ms?.stop();
    await nodelet?.dispose();
    await reg?.stop();
  });

  it('/metrics, scraped with a token that has nodes/metrics, has the upstream names and counts the running pods', async () => {
    ok(['-n', ns, 'create', 'serviceaccount', 'prom']);
    ok(['create', 'clusterrole', 'metrics-e2e-prom', '--verb=get', '--resource=nodes/metrics']);
    ok(['create', 'clusterrolebinding', 'metrics-e2e-prom', '--clusterrole=metrics-e2e-prom', `--serviceaccount=${ns}:prom`]);
    const token = ok(['-n', ns, 'create', 'token', 'prom', '--duration=10m']).trim();
    const text = await eventually(
      '/metrics with the token',
      async () => {
        const r = await kubeletGet(nodelet.port, '/metrics', info.caCert, { token });
        return r.status === 200 ? r.body : undefined;
      },
      30_000,
      500,
    );
    for (const name of [
      'kubelet_running_pods',
      'kubelet_running_containers',
      'kubelet_pod_start_duration_seconds_bucket',
      'kubelet_pod_worker_duration_seconds_bucket',
      'kubelet_node_name',
      'rest_client_requests_total',
      'nodelet_image_pulls_total',
      'process_cpu_seconds_total',
    ]) {
      expect(text, name).toMatch(new RegExp(`^${name}[{ ]`, 'm'));
    }
    const running = (await k.core.listNamespacedPod({ namespace: ns })).items.filter((p) => p.status?.phase === 'Running').length;
    expect(running).toBe(3);
    expect(text).toMatch(new RegExp(`^kubelet_running_pods ${running}$`, 'm'));
    expect(text).toMatch(/^kubelet_running_containers\{container_state="running"\} 3$/m);
    expect(text).toContain(`kubelet_node_name{node="${nodeName}"} 1`);
    expect(Number(/^kubelet_pod_start_duration_seconds_count (\d+)$/m.exec(text)?.[1])).toBeGreaterThanOrEqual(3);
    expect(text).toMatch(/^rest_client_requests_total\{code="20[01]",host="127\.0\.0\.1:\d+",method="(GET|PATCH|POST|PUT)"\} \d+$/m);
    // The same token has no nodes/stats: /stats/summary stays forbidden.
    expect((await kubeletGet(nodelet.port, '/stats/summary', info.caCert, { token })).status).toBe(403);
  });

  it("kubectl top node and kubectl top pod show nodelet's figures through metrics-server", async () => {
    const node = await eventually(
      'kubectl top node',
      () => {
        const r = kubectl(info, ['top', 'node', nodeName]);
        if (r.status !== 0) throw new Error(r.stderr.trim());
        return topRows(r.stdout).get(nodeName);
      },
      120_000,
      2000,
    );
    expect(node[0]).toBeGreaterThan(0);
    expect(node[1]).toBeGreaterThan(10 * 1024 ** 2); // nodelet's resident set
    const pods = await eventually(
      'kubectl top pod (all three)',
      () => {
        const r = kubectl(info, ['-n', ns, 'top', 'pod']);
        if (r.status !== 0) throw new Error(r.stderr.trim());
        const rows = topRows(r.stdout);
        return ['busy', 'idle', 'grower'].every((p) => rows.has(p)) ? rows : undefined;
      },
      120_000,
      2000,
    );
    console.info(`kubectl top: node ${JSON.stringify(node)}; pods ${JSON.stringify([...pods])} ([millicores, bytes])`);
    const [busyCpu] = pods.get('busy')!;
    const [idleCpu, idleMem] = pods.get('idle')!;
    const [, grownMem] = pods.get('grower')!;
    expect(busyCpu).toBeGreaterThan(100); // a spinning module keeps a core busy (shared, loaded machines give it less)
    expect(busyCpu).toBeGreaterThan(idleCpu * 10);
    expect(grownMem).toBeGreaterThanOrEqual(48 * 1024 ** 2);
    expect(grownMem).toBeGreaterThan(idleMem * 10);
  });

  // Not through `kubectl get --raw /api/v1/nodes/<n>/proxy/...`: the apiserver refuses to proxy to a node
  // whose address is loopback ("address not allowed"), and the harness's nodes are on 127.0.0.1. So these are
  // read as the apiserver would, with its kubelet client certificate (granted system:kubelet-api-admin).
  it('/stats/summary, /metrics/resource and /configz for the identity with system:kubelet-api-admin', async () => {
    const raw = async (path: string) => {
      const r = await kubeletGet(nodelet.port, path, info.caCert, { cert: info.kubeletClientCert, key: info.kubeletClientKey });
      expect(r.status, path).toBe(200);
      return r.body;
    };
    const summary = JSON.parse(await raw('/stats/summary'));
    expect(summary.node).toMatchObject({ nodeName, cpu: { usageCoreNanoSeconds: expect.any(Number) }, memory: { workingSetBytes: expect.any(Number) } });
    const busy = summary.pods.find((p: { podRef: { name: string } }) => p.podRef.name === 'busy');
    expect(busy).toMatchObject({ podRef: { namespace: ns }, containers: [{ name: 'main', cpu: { usageCoreNanoSeconds: expect.any(Number) } }] });
    expect(busy.containers[0].cpu.usageCoreNanoSeconds).toBeGreaterThan(1e9); // it has spun for well over a second
    expect(await raw('/metrics/resource')).toMatch(
      new RegExp(`^container_cpu_usage_seconds_total\\{container="main",namespace="${ns}",pod="busy"\\} [0-9.e+]+ \\d{13}$`, 'm'),
    );
    const configz = JSON.parse(await raw('/configz'));
    expect(configz.kubeletconfig).toMatchObject({
      kind: 'KubeletConfiguration',
      authorization: { mode: 'Webhook' },
      authentication: { webhook: { enabled: true }, anonymous: { enabled: false } },
    });
  });
});

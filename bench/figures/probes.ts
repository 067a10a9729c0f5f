/**
 * Figure 8: nodelet's CPU with 100 pods each probed every second. One
 * Deployment of 100 `hostNetwork: true` sleeping pods with a readiness probe
 * (`httpGet`, `periodSeconds: 1`) on a small HTTP server this process runs on
 * 127.0.0.1 (it answers 200). Once all 100 are Ready and `settleMs` passed:
 * nodelet's process-tree CPU over `cpuWindowMs` (the same sampling as figure
 * 3), the probe requests the server received per second in that window, and
 * how many TCP connections they came on (the shared keep-alive agent: far
 * fewer than requests). Compare with figure 3 at 100 pods (no probes).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clients } from '../lib/env.ts';
import { createNamespace, drainNamespace, podSpec } from '../lib/pods.ts';
import { mib, sampleTree } from '../lib/proc.ts';

/** Result of the probes figure. */
export interface ProbesResult {
  pods: number;
  allReadyMs: number;
  cores: number;
  windowS: number;
  rssMiB: number;
  probesPerS: number;
  connections: number;
}

const NS = 'probed';

/** Runs figure 8 on the nodelet with pid `pid`. */
export async function measureProbes(c: Clients, pid: number, image: string, o: { pods: number; settleMs: number; cpuWindowMs: number }): Promise<ProbesResult> {
  let requests = 0;
  const sockets = new Set<unknown>();
  const server = createServer((req, res) => {
    requests++;
    sockets.add(req.socket);
    res.end('ok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  await createNamespace(c, NS);
  try {
    const labels = { app: 'probed' };
    const spec = podSpec('nodelet', image, ['1000000'], { hostNetwork: true });
    spec.containers[0]!.readinessProbe = { httpGet: { port, path: '/ready' }, periodSeconds: 1 };
    const t0 = Date.now();
    await c.apps.createNamespacedDeployment({
      namespace: NS,
      body: { metadata: { name: 'probed' }, spec: { replicas: o.pods, selector: { matchLabels: labels }, template: { metadata: { labels }, spec } } },
    });
    const deadline = Date.now() + 900_000;
    for (;;) {
      const list = await c.core.listNamespacedPod({ namespace: NS });
      const ready = list.items.filter((p) => p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True')).length;
      if (ready >= o.pods) break;
      if (Date.now() > deadline) throw new Error(`only ${ready} of ${o.pods} probed pods Ready`);
      await new Promise((r) => setTimeout(r, 2000));
    }
    const allReadyMs = Date.now() - t0;
    await new Promise((r) => setTimeout(r, o.settleMs));
    const r0 = requests;
    sockets.clear();
    const s = await sampleTree(pid, o.cpuWindowMs);
    const result = {
      pods: o.pods,
      allReadyMs,
      cores: Math.round(s.cores * 1000) / 1000,
      windowS: Math.round(s.seconds),
      rssMiB: mib(s.memory.rss),
      probesPerS: Math.round(((requests - r0) / s.seconds) * 10) / 10,
      connections: sockets.size,
    };
    process.stdout.write(`  probes: ${JSON.stringify(result)}\n`);
    await c.apps.deleteNamespacedDeployment({ name: 'probed', namespace: NS });
    await drainNamespace(c, NS, 900_000);
    return result;
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

/**
 * Figure 9: nodelet's CPU with 100 pods each probed every second. One
 * Deployment of 100 `hostNetwork: true` sleeping pods with a readiness probe
 * (`httpGet`, `periodSeconds: 1`) on a small HTTP server this process runs on
 * 127.0.0.1 (it answers 200). Once all 100 are Ready and `settleMs` passed:
 * nodelet's process-tree CPU over `cpuWindowMs` (the same sampling as figure
 * 3), the probe requests the server received per second in that window, and
 * how many TCP connections they came on (the shared keep-alive agent: far
 * fewer than requests). The same 100 pods without probes are measured first
 * the same way (baseline), so the difference is the probes' cost.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { V1PodSpec } from '@kubernetes/client-node';
import type { Clients } from '../lib/env.ts';
import { createNamespace, drainNamespace, podSpec } from '../lib/pods.ts';
import { mib, sampleTree } from '../lib/proc.ts';

/** Result of the probes figure. */
export interface ProbesResult {
  pods: number;
  allReadyMs: number;
  cores: number;
  /** The same 100 pods without probes, measured the same way just before. */
  baselineCores: number;
  windowS: number;
  rssMiB: number;
  probesPerS: number;
  connections: number;
}

const NS = 'probed';

/** Creates a Deployment of `pods` sleeping pods in NS, waits for them to be Ready, settles, samples nodelet's CPU, then deletes them. */
async function sampleWith(
  c: Clients,
  pid: number,
  name: string,
  spec: V1PodSpec,
  o: { pods: number; settleMs: number; cpuWindowMs: number },
  window: { start(): void; end(): void },
): Promise<{ allReadyMs: number; cores: number; seconds: number; rssMiB: number }> {
  const labels = { app: name };
  const t0 = Date.now();
  await c.apps.createNamespacedDeployment({
    namespace: NS,
    body: { metadata: { name }, spec: { replicas: o.pods, selector: { matchLabels: labels }, template: { metadata: { labels }, spec } } },
  });
  const deadline = Date.now() + 900_000;
  for (;;) {
    const list = await c.core.listNamespacedPod({ namespace: NS, labelSelector: `app=${name}` });
    const ready = list.items.filter((p) => p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True')).length;
    if (ready >= o.pods) break;
    if (Date.now() > deadline) throw new Error(`only ${ready} of ${o.pods} ${name} pods Ready`);
    await new Promise((r) => setTimeout(r, 2000));
  }
  const allReadyMs = Date.now() - t0;
  await new Promise((r) => setTimeout(r, o.settleMs));
  window.start();
  const s = await sampleTree(pid, o.cpuWindowMs);
  window.end();
  await c.apps.deleteNamespacedDeployment({ name, namespace: NS });
  await drainNamespace(c, NS, 900_000);
  return { allReadyMs, cores: Math.round(s.cores * 1000) / 1000, seconds: s.seconds, rssMiB: mib(s.memory.rss) };
}

/** Runs figure 9 on the nodelet with pid `pid`: the same 100 pods without probes (baseline), then with a 1 s readiness probe. */
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
    const base = await sampleWith(c, pid, 'plain', podSpec('nodelet', image, ['1000000'], { hostNetwork: true }), o, {
      start: () => undefined,
      end: () => undefined,
    });
    const spec = podSpec('nodelet', image, ['1000000'], { hostNetwork: true });
    spec.containers[0]!.readinessProbe = { httpGet: { port, path: '/ready' }, periodSeconds: 1 };
    let r0 = 0,
      r1 = 0,
      conns = 0;
    const probed = await sampleWith(c, pid, 'probed', spec, o, {
      start: () => {
        r0 = requests;
        sockets.clear();
      },
      end: () => {
        r1 = requests;
        conns = sockets.size;
      },
    });
    const result = {
      pods: o.pods,
      allReadyMs: probed.allReadyMs,
      cores: probed.cores,
      baselineCores: base.cores,
      windowS: Math.round(probed.seconds),
      rssMiB: probed.rssMiB,
      probesPerS: Math.round(((r1 - r0) / probed.seconds) * 10) / 10,
      connections: conns,
    };
    process.stdout.write(`  probes: ${JSON.stringify(result)}\n`);
    return result;
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

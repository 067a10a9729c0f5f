/**
 * Figure 5, logs: a pod running test/fixtures/wasm/spew.c writes `mb` MB to
 * stdout and exits. Throughput = bytes / (worker 'started' → worker exit, from
 * the bench trace in nodelet); the status timestamps (1 s resolution) give a
 * second figure. Then `kubectl logs --tail=1000` (through the apiserver to
 * nodelet's kubelet API) is timed, median of 3, and its output checked.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { ClusterInfo } from '../../test/cluster/control-plane.ts';
import type { Clients } from '../lib/env.ts';
import { PodWatch } from '../lib/pod-watch.ts';
import { createNamespace, drainNamespace, podSpec } from '../lib/pods.ts';
import { median } from '../lib/stats.ts';
import { exitOf, readTrace } from '../lib/trace.ts';

/** Result of the logs figure. */
export interface LogsResult {
  mb: number;
  runMs?: number;
  mbPerS?: number;
  statusSeconds?: number;
  statusMbPerS?: number;
  tail1000Ms: number;
  tailLines: number;
  tailLastLine: string;
  phase?: string;
}

/** Runs the spew pod and times kubectl logs --tail=1000. */
export async function measureLogs(c: Clients, info: ClusterInfo, traceFile: string, image: string, mb: number): Promise<LogsResult> {
  const ns = 'logs';
  await createNamespace(c, ns);
  const w = await PodWatch.start(c.kc, ns);
  try {
    await c.core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name: 'spew' }, spec: podSpec('nodelet', image, [String(mb)], { restartPolicy: 'Never' }) },
    });
    await w.until('spew finished', () => w.pods.get('spew')?.finished !== undefined, 600_000);
    const pod = await c.core.readNamespacedPod({ name: 'spew', namespace: ns });
    const term = pod.status?.containerStatuses?.[0]?.state?.terminated;
    const statusSeconds = term?.startedAt && term.finishedAt ? (new Date(term.finishedAt).getTime() - new Date(term.startedAt).getTime()) / 1000 : undefined;
    const exit = exitOf(readTrace(traceFile), ns, 'spew');
    const times: number[] = [];
    let out = '';
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      const r = spawnSync(join(info.binDir, 'kubectl'), [`--kubeconfig=${info.adminKubeconfig}`, 'logs', '--tail=1000', '-n', ns, 'spew'], {
        encoding: 'utf8',
        maxBuffer: 64 << 20,
      });
      times.push(performance.now() - t);
      if (r.status !== 0) throw new Error(`kubectl logs failed: ${r.stderr}`);
      out = r.stdout;
    }
    const lines = out.split('\n').filter(Boolean);
    return {
      mb,
      phase: pod.status?.phase,
      runMs: exit ? Math.round(exit.runMs) : undefined,
      mbPerS: exit ? Math.round((mb / (exit.runMs / 1000)) * 10) / 10 : undefined,
      statusSeconds,
      statusMbPerS: statusSeconds ? Math.round((mb / Math.max(statusSeconds, 1)) * 10) / 10 : undefined,
      tail1000Ms: Math.round(median(times)),
      tailLines: lines.length,
      tailLastLine: (lines.at(-1) ?? '').slice(0, 24),
    };
  } finally {
    w.stop();
    await drainNamespace(c, ns);
  }
}

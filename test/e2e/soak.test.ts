/**
 * A short soak on nodelet's defaults (WASI modules in the external runtime process): pods churned
 * through the apiserver for a minute (bench/lib/soak.ts: short jobs, sleepers, crash-loopers,
 * emptyDir users and wasi:http pods, 30 alive at once), then all deleted. At least 150 pods, each
 * ending as its kind should (none stuck); after the warm-up neither nodelet nor the runtime gains
 * fds (slope ≤ 1 per 1,000 pods; the fds on live pods' files follow the pods alive, not the pods
 * created, and are set aside); once every pod is gone the mounts under the root dir are back to the
 * baseline, no path under `<root>/pods` names a deleted pod, and the same runtime process runs on
 * with its fds back to the baseline. `npm run soak -- --minutes 30` is the long run (bench/README.md).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { kubeletMetrics, runSoak, type SoakImages } from '../../bench/lib/soak.ts';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { pushComponent, pushModule } from './support/images.ts';
import { adminClients, podNamespace, waitNodeReady } from './support/kube.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

const CHURN_MS = 60_000;

describe('soak: pods churned on nodelet defaults', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'soak-n1';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  let images: SoakImages;

  beforeAll(async () => {
    reg = await startRegistry();
    const [hello, sleep, exitCode, writeFile, http] = await Promise.all([
      pushModule(reg, 'hello'),
      pushModule(reg, 'sleep'),
      pushModule(reg, 'exit-code'),
      pushModule(reg, 'write-file'),
      pushComponent(reg, 'hello-http'),
    ]);
    images = { hello, sleep, exitCode, writeFile, http };
    nodelet = await startNodelet(info, nodeName, [], 'defaults');
    ns = await podNamespace(k.core, 'soak');
    await waitNodeReady(k.core, nodeName);
  }, 300_000);
  afterAll(async () => {
    await nodelet?.dispose();
    await reg?.stop();
  });

  it('≥ 150 pods churned for a minute: all end as expected, no fd gained, mounts and pod dirs back to the baseline, the runtime alive', async () => {
    const t0 = Date.now();
    const r = await runSoak({
      kc: k.kc,
      namespace: ns,
      node: {
        nodeName,
        rootDir: nodelet.rootDir,
        nodeletPid: () => nodelet.peer.proc.pid,
        runtimePid: () => nodelet.runtimePid(),
        podInterface: 'nodelet0', // a node on nodelet's defaults keeps the default pod interface
        // Its self-signed serving certificate verifies itself.
        metrics: kubeletMetrics(() => nodelet.port, join(nodelet.rootDir, 'pki', 'kubelet.crt'), { cert: info.kubeletClientCert, key: info.kubeletClientKey }),
      },
      images,
      durationMs: CHURN_MS,
      livePods: 30,
      sampleEveryMs: 1_000,
    });
    const m = r.metrics;
    console.log(
      `soak: ${r.podsCreated} pods in ${r.durationS} s (${r.podsPerMinute}/min; ${JSON.stringify(r.byKind)}), ${r.errorCount} errors, ` +
        `${Math.round((Date.now() - t0) / 1000)} s with priming and drain (load ${readFileSync('/proc/loadavg', 'utf8').trim()})\n` +
        Object.entries(m)
          .map(
            ([name, x]) =>
              `  ${name}: ${x.slopePer1000} ${x.unit}/1,000 pods, floor ${x.floorSlopePer1000} (start ${x.start}, end ${x.end}; idle after − before ${x.idleDelta})`,
          )
          .join('\n') +
        `\n  baseline ${JSON.stringify(r.baseline)}\n  after ${JSON.stringify(r.after)}\n  leftovers ${r.leftovers.pathCount} paths (${r.leftovers.paths.slice(0, 3).join(', ')}), ${r.leftovers.mounts.length} mounts`,
    );
    expect(r.errors).toEqual([]);
    expect(r.errorCount).toBe(0);
    expect(r.podsCreated).toBeGreaterThanOrEqual(150);
    // A leak raises the floor of the fd count; an fd of a starting container only the sample that caught it.
    expect(m['nodelet fds beyond live pods']!.floorSlopePer1000).toBeLessThanOrEqual(1);
    expect(m['runtime fds beyond live pods']!.floorSlopePer1000).toBeLessThanOrEqual(1);
    // Every pod gone: the mounts are the baseline's, and no pod directory of a deleted pod is left.
    expect(r.after.mounts).toBe(r.baseline.mounts);
    expect(r.leftovers.mounts).toEqual([]);
    expect(r.leftovers.paths.filter((p) => p.startsWith('pods/'))).toEqual([]);
    // The same runtime process throughout, alive, with about the fds it had idle before the churn
    // (2 of slack: a keep-alive connection of the sampler's /metrics reads may be open or closed).
    expect(r.runtimePids).toEqual([r.baseline.runtime!.pid]);
    expect(() => process.kill(r.baseline.runtime!.pid, 0)).not.toThrow();
    expect(r.after.runtime!.fds).toBeLessThanOrEqual(r.baseline.runtime!.fds + 2);
    expect(r.after.nodelet!.fds).toBeLessThanOrEqual(r.baseline.nodelet!.fds + 2);
  }, 240_000);
});

/**
 * Restarting nodelet as a service manager does, on nodelet's defaults (as the README starts it: the
 * external WASI runtime, a self-signed serving certificate): with 30 pods running, SIGTERM ends
 * nodelet with status 0 within a second; started again, it finds the same 30 containers running
 * (0 restarts, same container IDs); a SIGTERM during its start also ends it with 0, and so does one
 * while its apiserver does not answer (frozen), both after the start and during a start that cannot
 * complete.
 */
import { readFileSync } from 'node:fs';
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startExtraApiServer } from '../cluster/control-plane.ts';
import { freezePeer } from '../harness/process.ts';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, waitNodeReady } from './support/kube.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

const N = 30;

describe('nodelet restarted with SIGTERM, on its defaults', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'restart-n1';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  let sleep: string;

  beforeAll(async () => {
    reg = await startRegistry();
    sleep = await pushModule(reg, 'sleep');
    nodelet = await startNodelet(info, nodeName, [], 'defaults');
    ns = await podNamespace(k.core, 'restart');
    await waitNodeReady(k.core, nodeName);
  });
  afterAll(async () => {
    await nodelet?.dispose();
    await reg?.stop();
  });

  const list = async () => (await k.core.listNamespacedPod({ namespace: ns })).items;
  const running = (p: V1Pod) => p.status?.containerStatuses?.[0]?.state?.running !== undefined;
  /** Sends `signal` to nodelet and resolves with its exit status and how long it took to exit. */
  const stopWith = async (signal: NodeJS.Signals) => {
    const t0 = performance.now();
    await nodelet.kill(signal);
    return { code: nodelet.peer.proc.exitCode, ms: performance.now() - t0 };
  };

  it(`SIGTERM with ${N} pods running: exit 0 within 1 s; started again, the same containers run on`, async () => {
    for (let i = 0; i < N; i++) {
      await k.core.createNamespacedPod({
        namespace: ns,
        body: {
          metadata: { name: `sleeper-${i}` },
          spec: { nodeName, tolerations: [WASM_TOLERATION], containers: [{ name: 'main', image: sleep, args: ['3600'] }] } as V1PodSpec,
        },
      });
    }
    const before = await eventually(
      `${N} pods running`,
      async () => {
        const pods = await list();
        return pods.length === N && pods.every(running) ? pods : undefined;
      },
      300_000,
    );
    const { code, ms } = await stopWith('SIGTERM');
    console.log(`nodelet SIGTERM with ${N} pods: exit ${code} after ${Math.round(ms)} ms`);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(1000);

    const mark = readFileSync(nodelet.logFile, 'utf8').split('\n').length;
    nodelet.start();
    const byName = new Map(before.map((p) => [p.metadata!.name!, p.status!.containerStatuses![0]!]));
    await eventually(
      `${N} containers re-adopted by the new process`,
      () =>
        readFileSync(nodelet.logFile, 'utf8')
          .split('\n')
          .slice(mark)
          .filter((l) => l.includes('re-adopted running container')).length >= N || undefined,
      120_000,
    );
    const after = await list();
    expect(after.every(running)).toBe(true);
    for (const p of after) expect(p.status!.containerStatuses![0]!.containerID).toBe(byName.get(p.metadata!.name!)!.containerID);
    for (const p of await list()) expect(p.status!.containerStatuses![0]!.restartCount).toBe(byName.get(p.metadata!.name!)!.restartCount);
  });

  it('SIGTERM while the apiserver does not answer (frozen: the port open, nothing answers), during the start and after it: exit 0 within 1 s', async () => {
    const apiserver = await startExtraApiServer(info, { verifyKubelets: false });
    let other: NodeletProcess | undefined;
    try {
      // Started and Ready, then the apiserver freezes: the stop must not wait on it.
      other = await startNodelet({ ...info, server: apiserver.server }, 'restart-n2');
      await waitNodeReady(k.core, 'restart-n2');
      freezePeer(apiserver.peer, true);
      let t0 = performance.now();
      await other.kill('SIGTERM');
      const afterStart = { code: other.peer.proc.exitCode, ms: performance.now() - t0 };
      // Started while the apiserver is frozen: the start cannot complete.
      other.start();
      await eventually('nodelet starting', () => readFileSync(other!.logFile, 'utf8').includes(`"pid":${other!.peer.proc.pid}`), 30_000, 20);
      t0 = performance.now();
      await other.kill('SIGTERM');
      const duringStart = { code: other.peer.proc.exitCode, ms: performance.now() - t0 };
      console.log(
        `SIGTERM with the apiserver frozen: after the start exit ${afterStart.code} in ${Math.round(afterStart.ms)} ms; during the start exit ${duringStart.code} in ${Math.round(duringStart.ms)} ms`,
      );
      expect(afterStart.code).toBe(0);
      expect(afterStart.ms).toBeLessThan(1000);
      expect(duringStart.code).toBe(0);
      expect(duringStart.ms).toBeLessThan(1000);
    } finally {
      freezePeer(apiserver.peer, false);
      await other?.dispose();
      await apiserver.peer.stop('SIGTERM', 10_000);
    }
  });

  it('SIGTERM while starting: exit 0 within 1 s, once the start is done or given up', async () => {
    await stopWith('SIGTERM');
    nodelet.start();
    await eventually(
      'nodelet starting',
      () =>
        readFileSync(nodelet.logFile, 'utf8')
          .split('\n')
          .some((l) => l.includes('"starting nodelet"') && l.includes(`"pid":${nodelet.peer.proc.pid}`)),
      30_000,
      20,
    );
    const { code, ms } = await stopWith('SIGTERM');
    console.log(`nodelet SIGTERM while starting: exit ${code} after ${Math.round(ms)} ms`);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(1000);
    nodelet.start();
    await waitNodeReady(k.core, nodeName);
  });
});

/**
 * The WASI runtime outside nodelet (`NODELET_WASI_RUNTIME=external`):
 * running pods survive a nodelet SIGKILL and a nodelet SIGTERM (0 restarts, same
 * container IDs, each log continues in the same file with no duplicated start
 * line and no missing tick), a killed runtime's pods are restarted by policy
 * with upstream's reasons while nodelet stays healthy, and a memory limit still
 * ends OOMKilled.
 *
 * N pods: `NODELET_E2E_RUNTIME_PODS` (default 100, the figure).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { parseCriLine } from '@nodelet/plugin-api/v1/toolkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

const N = Number(process.env.NODELET_E2E_RUNTIME_PODS ?? 100);

describe('the external WASI runtime across nodelet restarts', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'runtime-n1';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  const img: Record<string, string> = {};
  const names = Array.from({ length: N }, (_, i) => `sleeper-${i}`);

  beforeAll(async () => {
    reg = await startRegistry();
    for (const m of ['sleep', 'alloc']) img[m] = await pushModule(reg, m);
    nodelet = await startNodelet(info, nodeName, [], 'issued', { NODELET_WASI_RUNTIME: 'external' });
    ns = await podNamespace(k.core, 'runtime');
    await waitNodeReady(k.core, nodeName);
  });
  afterAll(async () => {
    await nodelet?.dispose();
    await reg?.stop();
  });

  const create = (name: string, spec: Partial<V1PodSpec>) =>
    k.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name },
        spec: { tolerations: [WASM_TOLERATION], nodeSelector: { 'kubernetes.io/hostname': nodeName }, containers: [], ...spec } as V1PodSpec,
      },
    });
  const list = async () => (await k.core.listNamespacedPod({ namespace: ns })).items.filter((p) => p.metadata!.name!.startsWith('sleeper-'));
  const ready = (p: V1Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
  const main = (p: V1Pod) => p.status!.containerStatuses![0]!;
  /** The stdout lines of a pod's current CRI log file (written by the runtime). */
  const logLines = (p: V1Pod) => {
    const m = p.metadata!;
    const file = join(nodelet.rootDir, 'logs', 'pods', `${m.namespace}_${m.name}_${m.uid}`, 'main', `${main(p).restartCount}.log`);
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => parseCriLine(l)!.content);
  };
  /** The log starts once and every tick follows the one before: no gap, no duplicate. */
  const expectContinuousLog = (p: V1Pod, atLeast: number) => {
    const lines = logLines(p);
    expect(lines.filter((l) => l.startsWith('sleeping'))).toEqual(['sleeping 3600']);
    expect(lines[0]).toBe('sleeping 3600');
    const ticks = lines.slice(1).map((l) => Number(/^tick (\d+)$/.exec(l)?.[1]));
    expect(ticks).toEqual(ticks.map((_, i) => i + 1));
    expect(ticks.length).toBeGreaterThan(atLeast);
  };
  /** Polls until nodelet's log shows `n` re-adoptions since `from` lines; returns them. */
  const adoptedSince = async (from: number, n: number) =>
    eventually(
      `${n} containers re-adopted`,
      async () => {
        const lines = readFileSync(nodelet.logFile, 'utf8').split('\n').slice(from);
        const adopted = lines.filter((l) => l.includes('re-adopted running container'));
        return adopted.length >= n ? adopted : undefined;
      },
      120_000,
    );
  const logLength = () => readFileSync(nodelet.logFile, 'utf8').split('\n').length;

  /** Restarts nodelet after `signal`; checks that every pod was re-adopted unchanged and its log goes on. */
  async function restartKeepsPods(signal: 'SIGKILL' | 'SIGTERM') {
    const before = new Map((await list()).map((p) => [p.metadata!.name!, p]));
    expect(before.size).toBe(N);
    const runtime = nodelet.runtimePid();
    expect(runtime).toBeDefined();
    const stopT0 = performance.now();
    await nodelet.kill(signal);
    const stopMs = performance.now() - stopT0;
    if (signal === 'SIGTERM') {
      // A clean stop: exit 0 within a second (a service manager's restart must not record a failure).
      console.log(`nodelet SIGTERM with ${N} pods: exited ${nodelet.peer.proc.exitCode} after ${Math.round(stopMs)} ms`);
      expect(nodelet.peer.proc.exitCode).toBe(0);
      expect(stopMs).toBeLessThan(1000);
    }
    process.kill(runtime!, 0); // the runtime outlived nodelet (throws if not)
    const ticksAtStop = new Map([...before].map(([n, p]) => [n, logLines(p).length - 1]));
    const mark = logLength();
    const t0 = Date.now();
    nodelet.start();
    await adoptedSince(mark, N);
    const adoptMs = Date.now() - t0;
    // Ready as the new process reports it: a status posted after the adoption.
    const after = await eventually(
      'all pods Ready after the restart',
      async () => {
        const pods = await list();
        return pods.length === N && pods.every(ready) ? pods : undefined;
      },
      60_000,
    );
    console.log(`nodelet ${signal}: ${N} pods re-adopted ${adoptMs} ms after the new process started (load ${readFileSync('/proc/loadavg', 'utf8').trim()})`);
    expect(nodelet.runtimePid()).toBe(runtime);
    for (const p of after) {
      const was = main(before.get(p.metadata!.name!)!);
      const now = main(p);
      expect(now.restartCount).toBe(was.restartCount);
      expect(now.containerID).toBe(was.containerID);
      expect(now.state?.running?.startedAt).toEqual(was.state?.running?.startedAt);
      // The runtime kept writing while nodelet was away: the same file goes on.
      await eventually(`${p.metadata!.name} ticks on`, async () => logLines(p).length - 1 > ticksAtStop.get(p.metadata!.name!)! || undefined, 30_000);
      expectContinuousLog(p, ticksAtStop.get(p.metadata!.name!)!);
    }
  }

  it(`runs ${N} sleeping, log-writing pods in the runtime process`, async () => {
    for (const name of names) await create(name, { containers: [{ name: 'main', image: img.sleep, args: ['3600'] }] });
    await eventually(
      `${N} pods Ready`,
      async () => {
        const pods = await list();
        return (pods.length === N && pods.every(ready)) || undefined;
      },
      300_000,
    );
    const pods = await list();
    for (const p of pods) expect(main(p).containerID).toMatch(/^wasi:\/\//);
    const rss = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
    console.log(
      `${N} pods: runtime RSS ${rss(nodelet.runtimePid()!).toFixed(0)} MiB, nodelet RSS ${rss(nodelet.peer.proc.pid!).toFixed(0)} MiB (load ${readFileSync('/proc/loadavg', 'utf8').trim()})`,
    );
  });

  it('nodelet SIGKILLed and started again: 0 restarts, same container IDs, logs continue', async () => {
    await restartKeepsPods('SIGKILL');
  });

  it('nodelet SIGTERMed and started again: its pods were not stopped, the same holds', async () => {
    await restartKeepsPods('SIGTERM');
  });

  it('the runtime process killed: its pods restart by policy (ContainerStatusUnknown/137, SandboxChanged), nodelet stays healthy', async () => {
    const old = nodelet.runtimePid()!;
    const before = new Map((await list()).map((p) => [p.metadata!.name!, main(p).containerID]));
    const t0 = performance.now();
    process.kill(-old, 'SIGKILL');
    // No status may go on showing a dead container as running: within 2 s every pod's status shows
    // its container ended or its replacement.
    await eventually(
      'no pod reporting its dead container as running',
      async () => (await list()).every((p) => main(p).state?.running === undefined || main(p).containerID !== before.get(p.metadata!.name!)) || undefined,
      30_000,
      50,
    );
    const correctMs = performance.now() - t0;
    console.log(`runtime killed: every pod's status correct after ${Math.round(correctMs)} ms (${N} pods)`);
    expect(correctMs).toBeLessThan(2000);
    const pods = await eventually(
      'every pod restarted once and Running again',
      async () => {
        const ps = await list();
        return ps.length === N && ps.every((p) => main(p).restartCount === 1 && main(p).state?.running !== undefined) ? ps : undefined;
      },
      300_000,
    );
    for (const p of pods) {
      const last = main(p).lastState?.terminated;
      expect(last?.reason).toBe('ContainerStatusUnknown');
      expect(last?.exitCode).toBe(137);
    }
    // Events are sent one at a time after the status (as upstream's broadcaster): wait for them.
    const events = await eventually(
      'SandboxChanged event',
      async () => {
        const l = await k.core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.name=${names[0]},reason=SandboxChanged` });
        return l.items.length > 0 ? l : undefined;
      },
      10_000,
    );
    expect(events.items.length).toBeGreaterThanOrEqual(1);
    const pid = nodelet.runtimePid();
    expect(pid).toBeDefined();
    expect(pid).not.toBe(old);
    expect(nodelet.peer.proc.exitCode).toBeNull();
    const healthz = await fetch(`http://127.0.0.1:${nodelet.healthzPort}/healthz`);
    expect(healthz.status).toBe(200);
    await waitNodeReady(k.core, nodeName);
  });

  it('a memory bomb under a 64Mi limit ends OOMKilled (137) in the runtime process', async () => {
    await create('bomb', { restartPolicy: 'Never', containers: [{ name: 'main', image: img.alloc, resources: { limits: { memory: '64Mi' } } }] });
    const p = await podUntil(k.core, ns, 'bomb', 'Failed', (p) => p.status?.phase === 'Failed', 120_000);
    const t = main(p).state!.terminated!;
    expect(t.reason).toBe('OOMKilled');
    expect(t.exitCode).toBe(137);
    expect(nodelet.peer.proc.exitCode).toBeNull();
  });
});

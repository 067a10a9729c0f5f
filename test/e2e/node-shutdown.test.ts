/**
 * Graceful node shutdown end to end (upstream's `shutdownGracePeriod` 30 s,
 * `shutdownGracePeriodCriticalPods` 10 s): SIGPWR to nodelet (the documented
 * trigger where systemd-logind's PrepareForShutdown is not used) turns the node
 * NotReady (`node is shutting down`) before any pod stops, stops regular pods
 * first and the critical one (system-node-critical, in kube-system) last, and
 * leaves every pod Failed/Terminated with upstream's message and a
 * DisruptionTarget condition; new pods are rejected (NodeShutdown). A plain
 * SIGTERM (nodelet restarting) is not a node shutdown: no pod is failed.
 */
import { readFileSync } from 'node:fs';
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, condition, eventually, podNamespace, waitNodeReady } from './support/kube.ts';
import { startNodelet, type NodeletProcess, E2E_WASI_RUNTIME } from './support/nodelet-process.ts';

const MESSAGE = 'Pod was terminated in response to imminent node shutdown.';

/** A pod's phase and first container's state and ID (and whether that is still `before`), for a timeout's message. */
function describePod(p: V1Pod, before?: string): string {
  const c = p.status?.containerStatuses?.[0];
  const state = c?.state?.running
    ? 'running'
    : c?.state?.terminated
      ? `terminated(${c.state.terminated.reason})`
      : `waiting(${c?.state?.waiting?.reason ?? '-'})`;
  const id = c?.containerID === undefined ? 'no id' : before !== undefined && c.containerID === before ? 'same id' : 'new id';
  return `${p.metadata?.name}: ${p.status?.phase} ${state} ${id}`;
}

/** nodelet's last warnings and errors (pino level ≥ 40) in its log text, for a timeout's message. */
function warnings(log: string): string {
  const lines = log.split('\n').filter((l) => /"level":(4|5|6)0,/.test(l));
  return `nodelet's last warnings: ${lines.slice(-4).join(' | ') || 'none'}`;
}

describe('graceful node shutdown', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'shutdown-n1';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  let image: string;
  const critical = `critical-${Math.random().toString(36).slice(2, 7)}`;

  beforeAll(async () => {
    reg = await startRegistry();
    image = await pushModule(reg, 'sleep');
    nodelet = await startNodelet(info, nodeName, ['--shutdown-grace-period=30s', '--shutdown-grace-period-critical-pods=10s']);
    ns = await podNamespace(k.core, 'shutdown');
    await waitNodeReady(k.core, nodeName);
  });
  afterAll(async () => {
    await k.core.deleteNamespacedPod({ name: critical, namespace: 'kube-system', gracePeriodSeconds: 0 }).catch(() => undefined);
    await nodelet?.dispose();
    await reg?.stop();
  });

  const create = (namespace: string, name: string, spec: Partial<V1PodSpec> = {}) =>
    k.core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name },
        spec: {
          tolerations: [WASM_TOLERATION],
          nodeSelector: { 'kubernetes.io/hostname': nodeName },
          containers: [{ name: 'main', image, args: ['3600'] }],
          ...spec,
        } as V1PodSpec,
      },
    });
  const read = (namespace: string, name: string) => k.core.readNamespacedPod({ name, namespace });
  const running = (p: V1Pod) => p.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.state?.running !== undefined;
  const all = () => [read(ns, 'web-1'), read(ns, 'web-2'), read('kube-system', critical)];

  it('runs regular pods and a critical one', async () => {
    await create(ns, 'web-1');
    await create(ns, 'web-2');
    await create('kube-system', critical, { priorityClassName: 'system-node-critical' });
    await eventually('pods Running', async () => (await Promise.all(all())).every(running), 60_000, 500);
    expect((await read('kube-system', critical)).spec?.priority).toBe(2_000_001_000);
  });

  it('a plain SIGTERM (nodelet restart) is not a node shutdown: no pod is failed, and nodelet comes back Ready', async () => {
    const ids = (ps: V1Pod[]) => ps.map((p) => p.status?.containerStatuses?.[0]?.containerID);
    const before = ids(await Promise.all(all()));
    expect(await nodelet.stop()).toBe(0);
    for (const p of await Promise.all(all())) expect(p.status?.phase).not.toBe('Failed');
    await nodelet.restart();
    const starts = () => readFileSync(nodelet.logFile, 'utf8').split('"msg":"nodelet is running"').length - 1;
    await eventually('the restarted nodelet running', () => starts() === 2, 60_000, 250);
    await waitNodeReady(k.core, nodeName);
    // In-process, the containers ended with nodelet, so the restarted nodelet starts them again (new
    // IDs); the external WASI runtime kept them and the new nodelet re-adopts them (same IDs). Wait for
    // that, so the shutdown below finds every pod admitted by this process.
    const kept = E2E_WASI_RUNTIME === 'external';
    await eventually(
      'pods Running again under the restarted nodelet',
      async () => {
        const ps = await Promise.all(all());
        const log = readFileSync(nodelet.logFile, 'utf8');
        const adopted = log.split('"msg":"re-adopted running container"').length - 1;
        if (ps.every(running) && ids(ps).every((id, i) => (kept ? id === before[i] : id !== before[i])) && (!kept || adopted >= ps.length)) return true;
        // Not yet: the error names what each pod shows and what nodelet last warned of (the timeout reports it).
        throw new Error(`${ps.map((p, i) => describePod(p, before[i])).join('; ')}; adopted ${adopted}; ${warnings(log)}`);
      },
      60_000,
      500,
    );
  });

  it('on SIGPWR: NotReady first, regular pods then the critical pod, all Failed/Terminated with DisruptionTarget', async () => {
    // One poller records the order in which the node and pods change (no timing is asserted, only order).
    const seen: string[] = [];
    const note = (s: string) => {
      if (!seen.includes(s)) seen.push(s);
    };
    let polling = true;
    const poller = (async () => {
      // One more read after the stop: it sees at least what the check that stopped it saw.
      for (let last = false; !last;) {
        last = !polling;
        const [n, ...pods] = await Promise.all([k.core.readNode({ name: nodeName }), ...all()]);
        if (condition(n, 'Ready')?.status === 'False') note('node NotReady');
        for (const p of pods) if (p.status?.phase === 'Failed') note(`${p.metadata!.namespace === 'kube-system' ? 'critical' : p.metadata!.name} Failed`);
        if (!last) await new Promise((r) => setTimeout(r, 100)); // the sampling interval: the order in which things show is what is recorded
      }
    })();
    let pods: V1Pod[];
    try {
      nodelet.peer.proc.kill('SIGPWR');
      pods = await eventually(
        'every pod Failed within the 30 s budget',
        async () => {
          const ps = await Promise.all(all());
          if (ps.every((p) => p.status?.phase === 'Failed')) return ps;
          throw new Error(`${ps.map((p) => describePod(p)).join('; ')}; ${warnings(readFileSync(nodelet.logFile, 'utf8'))}`);
        },
        30_000,
        500,
      );
    } finally {
      polling = false;
      await poller.catch(() => undefined);
    }
    expect(seen[0]).toBe('node NotReady');
    expect(seen.indexOf('critical Failed')).toBeGreaterThan(Math.max(seen.indexOf('web-1 Failed'), seen.indexOf('web-2 Failed')));
    const node = await k.core.readNode({ name: nodeName });
    expect(condition(node, 'Ready')).toMatchObject({ status: 'False', reason: 'KubeletNotReady', message: 'node is shutting down' });
    for (const p of pods) {
      expect(p.status).toMatchObject({ phase: 'Failed', reason: 'Terminated', message: MESSAGE });
      expect(p.status?.conditions).toContainEqual(
        expect.objectContaining({ type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message: MESSAGE }),
      );
      expect(p.status?.containerStatuses?.[0]?.state?.terminated).toBeDefined();
    }
    const finished = (p: V1Pod) => new Date(p.status!.containerStatuses![0]!.state!.terminated!.finishedAt!).getTime();
    expect(finished(pods[2]!)).toBeGreaterThanOrEqual(Math.max(finished(pods[0]!), finished(pods[1]!)));
    // Events are sent one at a time after the status (as upstream's broadcaster): wait for them.
    const events = await eventually(
      'NodeShutdown event',
      async () => {
        const l = (await k.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${nodeName}` })).items;
        return l.some((e) => e.reason === 'NodeShutdown') ? l : undefined;
      },
      10_000,
    );
    expect(events.map((e) => `${e.reason}: ${e.message}`)).toContain('NodeShutdown: Shutdown manager detected shutdown event');
    const killing = await eventually(
      'Killing events',
      async () => {
        const l = (await k.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'reason=Killing' })).items;
        return new Set(l.map((e) => e.involvedObject.name)).size >= 2 ? l : undefined;
      },
      10_000,
    );
    expect([...new Set(killing.map((e) => e.involvedObject.name))].sort()).toEqual(['web-1', 'web-2']);
  });

  it('rejects a pod created while the node shuts down (NodeShutdown)', async () => {
    await create(ns, 'late', { nodeName, nodeSelector: undefined });
    const p = await eventually('late pod rejected', async () => {
      const x = await read(ns, 'late');
      return x.status?.phase === 'Failed' ? x : undefined;
    });
    expect(p.status).toMatchObject({ reason: 'NodeShutdown', message: 'Pod was rejected: Pod was rejected as the node is shutting down.' });
  });
});

/**
 * Thread placement by QoS class end to end: BestEffort pods'
 * sleeping modules share the provider's few shared threads (nodelet's thread
 * count grows by far less than the number of pods, and /metrics shows the
 * shared threads with their modules and event-loop delay), while a Guaranteed
 * pod's module gets a thread of its own (it is on none of the shared threads).
 */
import { readdirSync } from 'node:fs';
import type { V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { kubeletGet } from './support/kubelet-api.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

/** BestEffort pods started (more than shared threads + idle pool workers + slack). */
const PODS = 12;

describe('WASI modules on threads by QoS class', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'threads-n1';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  let image: string;

  const threads = () => readdirSync(`/proc/${nodelet.peer.proc.pid}/task`).length;
  const metrics = async () => {
    const r = await kubeletGet(nodelet.port, '/metrics', info.caCert, { cert: info.kubeletClientCert, key: info.kubeletClientKey });
    expect(r.status).toBe(200);
    return r.body;
  };
  /** thread id → containers, from nodelet_provider_thread_containers. */
  const sharedThreads = (text: string) => {
    const out = new Map<string, number>();
    for (const m of text.matchAll(/^nodelet_provider_thread_containers\{provider="wasi",thread="(\d+)"\} (\d+)$/gm)) out.set(m[1]!, Number(m[2]));
    return out;
  };
  const pod = (name: string, spec: Partial<V1PodSpec['containers'][number]> = {}) =>
    k.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name },
        spec: { nodeName, tolerations: [WASM_TOLERATION], containers: [{ name: 'main', image, args: ['3600'], ...spec }] } as V1PodSpec,
      },
    });

  beforeAll(async () => {
    reg = await startRegistry();
    image = await pushModule(reg, 'sleep');
    nodelet = await startNodelet(info, nodeName);
    ns = await podNamespace(k.core, 'threads');
    await waitNodeReady(k.core, nodeName);
  });
  afterAll(async () => {
    await nodelet?.dispose();
    await reg?.stop();
  });

  it('BestEffort sleeping pods share one thread; a Guaranteed pod gets one of its own', async () => {
    // The first pod pulls the image, which boots the idle worker pool: count threads after it.
    await pod('be-0');
    await podUntil(k.core, ns, 'be-0', 'Running', (x) => x.status?.phase === 'Running');
    const before = await eventually('the pool settled', async () => {
      const a = threads();
      await new Promise((r) => setTimeout(r, 500)); // a fixed window: settled means no thread came or went in it
      return threads() === a ? a : undefined;
    });
    for (let i = 1; i < PODS; i++) await pod(`be-${i}`);
    for (let i = 1; i < PODS; i++) await podUntil(k.core, ns, `be-${i}`, 'Running', (x) => x.status?.phase === 'Running');
    const shared = await eventually('every BestEffort module on a shared thread', async () => {
      const s = sharedThreads(await metrics());
      return [...s.values()].reduce((a, b) => a + b, 0) === PODS ? s : undefined;
    });
    // One of the two the default NODELET_WASI_SHARED_THREADS allows: sleeping modules leave it room.
    expect(shared.size).toBe(1);
    // Slack for a thread Node itself may start: far from one per pod.
    expect(threads() - before).toBeLessThanOrEqual(2);
    expect(await metrics()).toMatch(/^nodelet_provider_thread_event_loop_delay_seconds\{provider="wasi",thread="\d+"\} [0-9.e+-]+$/m);

    await pod('guaranteed', { resources: { limits: { cpu: '100m', memory: '64Mi' } } });
    await podUntil(k.core, ns, 'guaranteed', 'Running', (x) => x.status?.phase === 'Running');
    expect((await k.core.readNamespacedPod({ name: 'guaranteed', namespace: ns })).status?.qosClass).toBe('Guaranteed');
    const after = sharedThreads(await metrics());
    expect([...after.values()].reduce((a, b) => a + b, 0)).toBe(PODS); // not on a shared thread
    await eventually('a thread of its own (the pool boots a replacement for the worker it took)', async () => (threads() > before ? true : undefined));
  });
});

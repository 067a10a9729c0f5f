/**
 * `emptyDir.sizeLimit` end to end: a pod writing past its emptyDir's limit is
 * evicted as upstream's eviction manager does it (Failed, reason Evicted,
 * `Usage of EmptyDir volume "cache" exceeds the limit "1Mi". `, DisruptionTarget,
 * a Warning Evicted event); a pod within its limit keeps running.
 */
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventsOnce, eventually, podNamespace, waitNodeReady } from './support/kube.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

describe('emptyDir sizeLimit eviction', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'evict-n1';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  let image: string;

  beforeAll(async () => {
    reg = await startRegistry();
    image = await pushModule(reg, 'fill');
    nodelet = await startNodelet(info, nodeName);
    ns = await podNamespace(k.core, 'evict');
    await waitNodeReady(k.core, nodeName);
  });
  afterAll(async () => {
    await nodelet?.dispose();
    await reg?.stop();
  });

  const create = (name: string, sizeLimit: string, kib: number) =>
    k.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name },
        spec: {
          tolerations: [WASM_TOLERATION],
          nodeSelector: { 'kubernetes.io/hostname': nodeName },
          volumes: [{ name: 'cache', emptyDir: { sizeLimit } }],
          containers: [{ name: 'main', image, args: ['/cache/data', String(kib)], volumeMounts: [{ name: 'cache', mountPath: '/cache' }] }],
        } as V1PodSpec,
      },
    });
  const read = (name: string) => k.core.readNamespacedPod({ name, namespace: ns });
  const running = (p: V1Pod) => p.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.state?.running !== undefined;

  it("evicts the pod writing past its emptyDir's sizeLimit with upstream's message; the one within its limit runs on", async () => {
    await create('within', '8Mi', 1024);
    await create('over', '1Mi', 2048);
    const message = 'Usage of EmptyDir volume "cache" exceeds the limit "1Mi". ';
    const p = await eventually(
      'pod over its limit evicted',
      async () => {
        const x = await read('over');
        return x.status?.phase === 'Failed' ? x : undefined;
      },
      60_000,
      500,
    );
    expect(p.status).toMatchObject({ phase: 'Failed', reason: 'Evicted', message });
    expect(p.status?.conditions).toContainEqual(expect.objectContaining({ type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message }));
    const events = await eventsOnce(k.core, ns, 'involvedObject.name=over,reason=Evicted');
    expect(events.map((e) => `${e.type} ${e.message}`)).toEqual([`Warning ${message}`]);
    expect(running(await read('within'))).toBe(true);
  });
});

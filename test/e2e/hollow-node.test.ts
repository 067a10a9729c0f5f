/**
 * kubemark's hollow node (the upstream kubelet with a fake CRI runtime) as a
 * peer on the shared control plane: it registers a Node with its own node
 * identity, the Node goes Ready, and pods placed on it — by the real scheduler
 * through a nodeSelector, and directly by nodeName — reach Running. The bench
 * uses it as the upstream kubelet's reference (bench/README.md).
 */
import type { V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { HOLLOW_TAINT, startHollowNode, type HollowNode } from '../cluster/hollow-node.ts';
import { adminClients, condition, eventually, podNamespace, podUntil } from './support/kube.ts';

describe('kubemark hollow node', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'hollow-e2e-1';
  let hollow: HollowNode | undefined;
  let ns: string;

  beforeAll(async () => {
    hollow = await startHollowNode(info, nodeName, { labels: { 'nodelet.dev/peer': 'hollow' } });
    ns = await podNamespace(k.core, 'hollow');
  });
  afterAll(async () => {
    await hollow?.stop();
  });

  const spec = (placement: Partial<V1PodSpec>): V1PodSpec => ({
    tolerations: [{ ...HOLLOW_TAINT, operator: 'Equal' }],
    containers: [{ name: 'main', image: 'registry.invalid/hollow/anything:1' }],
    ...placement,
  });

  it('registers a Ready Node as the upstream kubelet does (its identity, its taint, its labels)', async () => {
    const node = await k.core.readNode({ name: nodeName });
    expect(condition(node, 'Ready')).toMatchObject({ status: 'True', reason: 'KubeletReady' });
    expect(node.metadata?.labels).toMatchObject({ 'kubernetes.io/hostname': nodeName, 'nodelet.dev/peer': 'hollow' });
    expect(node.spec?.taints).toContainEqual(expect.objectContaining(HOLLOW_TAINT));
    expect(node.spec?.providerID).toBe(`kubemark://${nodeName}`);
    expect(node.status?.nodeInfo?.kubeletVersion).toBe('v1.36.3');
  });

  it('runs a pod the scheduler places on it through a nodeSelector', async () => {
    await k.core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name: 'scheduled' }, spec: spec({ nodeSelector: { 'kubernetes.io/hostname': nodeName } }) },
    });
    const pod = await podUntil(k.core, ns, 'scheduled', 'Running', (p) => p.status?.phase === 'Running', 60_000);
    expect(pod.spec?.nodeName).toBe(nodeName);
    expect(pod.status?.containerStatuses?.[0]).toMatchObject({ name: 'main', ready: true, state: { running: expect.anything() } });
  });

  it('runs a pod bound to it by nodeName, and deletes it when asked', async () => {
    await k.core.createNamespacedPod({ namespace: ns, body: { metadata: { name: 'bound' }, spec: spec({ nodeName }) } });
    await podUntil(k.core, ns, 'bound', 'Running', (p) => p.status?.phase === 'Running', 60_000);
    await k.core.deleteNamespacedPod({ namespace: ns, name: 'bound' });
    const gone = async () =>
      k.core.readNamespacedPod({ namespace: ns, name: 'bound' }).then(
        () => false,
        () => true,
      );
    expect(await eventually('bound pod deleted', gone, 60_000)).toBe(true);
  });
});

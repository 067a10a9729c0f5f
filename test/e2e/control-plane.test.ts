/**
 * The control plane the e2e tests run against is the real one: the real
 * controller-manager turns a Deployment into a ReplicaSet and Pods, and the
 * apiserver reports v1.36.x.
 */
import { describe, expect, inject, it } from 'vitest';
import { adminClients, eventually, freshNamespace } from './support/kube.ts';

describe('real control plane', () => {
  const info = inject('cluster');
  const k = adminClients(info);

  it('reports Kubernetes v1.36.x', async () => {
    const v = await k.version.getCode();
    expect(v.gitVersion).toMatch(/^v1\.36\.\d+$/);
    expect(v.minor).toBe('36');
  });

  it('runs the real deployment and replicaset controllers', async () => {
    const ns = await freshNamespace(k.core, 'cp');
    await k.apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: 'web' } },
          template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'example.invalid/none:1' }] } },
        },
      },
    });
    const rs = await eventually('a ReplicaSet', async () => {
      const list = await k.apps.listNamespacedReplicaSet({ namespace: ns });
      return list.items.length === 1 ? list.items[0] : undefined;
    });
    expect(rs.metadata?.ownerReferences?.[0]?.kind).toBe('Deployment');
    const pods = await eventually('3 pods', async () => {
      const list = await k.core.listNamespacedPod({ namespace: ns });
      return list.items.length === 3 ? list.items : undefined;
    });
    for (const p of pods) expect(p.metadata?.ownerReferences?.[0]?.name).toBe(rs.metadata?.name);
  });
});

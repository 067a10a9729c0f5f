/** With a kubeconfig, static pods from --pod-manifest-path get mirror pods whose status nodelet posts. */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminClients, eventually } from './support/kube.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

describe('static pods in cluster mode', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'static-n1';
  let nodelet: NodeletProcess;

  beforeAll(async () => {
    nodelet = await startNodelet(info, nodeName, [`--pod-manifest-path=${resolve(import.meta.dirname, '..', '..', 'examples', 'static-pods')}`]);
  });
  afterAll(async () => {
    await nodelet?.dispose();
  });

  it('creates a mirror pod owned by the Node and reports the static pod Succeeded on it', async () => {
    const name = `hello-wasi-${nodeName}`;
    const mirror = await eventually(
      'mirror pod Succeeded',
      async () => {
        const p = await k.core.readNamespacedPod({ name, namespace: 'default' }).catch(() => undefined);
        return p?.status?.phase === 'Succeeded' ? p : undefined;
      },
      60_000,
    );
    expect(mirror.metadata?.annotations?.['kubernetes.io/config.mirror']).toMatch(/^[0-9a-f]{32}$/);
    expect(mirror.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Node', name: nodeName });
    expect(mirror.spec?.nodeName).toBe(nodeName);
    expect(mirror.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(0);
  });
});

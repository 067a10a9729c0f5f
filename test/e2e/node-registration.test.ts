/**
 * nodelet registers its Node through the real apiserver with a node identity
 * (system:node:<name>, checked by the Node authorizer and NodeRestriction),
 * keeps it Ready with a Lease, and the real node-lifecycle controller marks
 * it NotReady when nodelet stops; a restart makes it Ready again.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminClients, condition, eventually } from './support/kube.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';
import * as k8s from '@kubernetes/client-node';

describe('node registration', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const coordination = k.kc.makeApiClient(k8s.CoordinationV1Api);
  const nodeName = 'reg-n1';
  let nodelet: NodeletProcess;

  beforeAll(async () => {
    nodelet = await startNodelet(info, nodeName);
  });
  afterAll(async () => {
    await nodelet?.dispose();
  });

  it('registers the Node and reports Ready=True', async () => {
    const node = await eventually('node Ready', async () => {
      const n = await k.core.readNode({ name: nodeName }).catch(() => undefined);
      return n && condition(n, 'Ready')?.status === 'True' ? n : undefined;
    });
    expect(condition(node, 'Ready')?.reason).toBe('KubeletReady');
    expect(condition(node, 'MemoryPressure')?.status).toBe('False');
    expect(node.metadata?.labels?.['kubernetes.io/hostname']).toBe(nodeName);
    expect(node.metadata?.labels?.['kubernetes.io/arch']).toBe('wasm32-wasi');
    expect(node.spec?.taints).toContainEqual(expect.objectContaining({ key: 'kubernetes.io/arch', value: 'wasm32-wasi', effect: 'NoSchedule' }));
    expect(node.status?.addresses).toContainEqual({ type: 'InternalIP', address: '127.0.0.1' });
    expect(node.status?.daemonEndpoints?.kubeletEndpoint?.Port).toBe(nodelet.port);
    expect(node.status?.nodeInfo?.containerRuntimeVersion).toMatch(/^nodelet-wasi:\/\//);
    expect(Number(node.status?.capacity?.pods)).toBe(110);
  });

  it('keeps a Lease in kube-node-lease', async () => {
    const lease = await eventually('lease', () => coordination.readNamespacedLease({ name: nodeName, namespace: 'kube-node-lease' }));
    expect(lease.spec?.holderIdentity).toBe(nodeName);
    expect(lease.spec?.leaseDurationSeconds).toBe(40);
    expect(lease.metadata?.ownerReferences?.[0]?.kind).toBe('Node');
  });

  it('exits 0 on SIGTERM, is marked NotReady by the controller-manager, and is Ready again after restart', async () => {
    expect(await nodelet.stop()).toBe(0);
    const down = await eventually(
      'node NotReady/Unknown',
      async () => {
        const n = await k.core.readNode({ name: nodeName });
        return condition(n, 'Ready')?.status !== 'True' ? n : undefined;
      },
      90_000,
      1000,
    );
    expect(condition(down, 'Ready')?.reason).toBe('NodeStatusUnknown');
    await nodelet.restart();
    await eventually(
      'node Ready again',
      async () => {
        const n = await k.core.readNode({ name: nodeName });
        return condition(n, 'Ready')?.status === 'True';
      },
      60_000,
      500,
    );
  });
});

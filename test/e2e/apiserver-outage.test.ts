/**
 * An apiserver outage, as an operator's bad day goes: nodelet talks to its own
 * kube-apiserver (a second one on the shared etcd, so other test files keep
 * theirs), which is frozen (SIGSTOP: the port stays open, nothing answers) for
 * 60 s with 20 sleeping pods running. The controller-manager (on the first
 * apiserver, `--node-monitor-grace-period=20s`) marks the node Unknown meanwhile.
 * After the return nodelet notices the server's copy differs from its own view
 * and posts Ready again within 15 s (one 10 s status tick plus slack); no
 * container restarts; a pod created after the return runs.
 */
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startExtraApiServer, type ExtraApiServer } from '../cluster/control-plane.ts';
import { freezePeer } from '../harness/process.ts';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, condition, eventually, podNamespace, waitNodeReady } from './support/kube.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

const PODS = 20;
const OUTAGE_MS = 60_000;

describe('apiserver outage', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'outage-n1';
  let apiserver: ExtraApiServer;
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  let image: string;
  /** containerID of each pod's container before the outage. */
  const before = new Map<string, string>();

  beforeAll(async () => {
    reg = await startRegistry();
    image = await pushModule(reg, 'sleep');
    apiserver = await startExtraApiServer(info, { verifyKubelets: true });
    nodelet = await startNodelet({ ...info, server: apiserver.server }, nodeName, ['--node-status-update-frequency=10s']);
    ns = await podNamespace(k.core, 'outage');
    await waitNodeReady(k.core, nodeName);
  });
  afterAll(async () => {
    if (apiserver) freezePeer(apiserver.peer, false);
    await nodelet?.dispose();
    await apiserver?.peer.stop('SIGTERM', 10_000);
    await reg?.stop();
  });

  const create = (name: string) =>
    k.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name },
        spec: {
          tolerations: [WASM_TOLERATION],
          nodeSelector: { 'kubernetes.io/hostname': nodeName },
          containers: [{ name: 'main', image, args: ['3600'] }],
        } as V1PodSpec,
      },
    });
  const running = (p: V1Pod) => p.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.state?.running !== undefined;
  const listPods = async () => (await k.core.listNamespacedPod({ namespace: ns })).items;
  const healthz = async () => (await fetch(`http://127.0.0.1:${nodelet.healthzPort}/healthz`)).status;

  it(`runs ${PODS} sleeping pods`, async () => {
    await Promise.all(Array.from({ length: PODS }, (_, i) => create(`sleeper-${i}`)));
    const pods = await eventually(
      `${PODS} pods Running`,
      async () => {
        const items = await listPods();
        return items.length === PODS && items.every(running) ? items : undefined;
      },
      120_000,
      1000,
    );
    for (const p of pods) before.set(p.metadata!.name!, p.status!.containerStatuses![0]!.containerID!);
  });

  it(`stays up while its apiserver is frozen for ${OUTAGE_MS / 1000} s; the node-lifecycle controller marks the node Unknown`, async () => {
    freezePeer(apiserver.peer, true);
    const frozenAt = Date.now();
    const unknown = await eventually(
      'node Ready=Unknown',
      async () => {
        const n = await k.core.readNode({ name: nodeName });
        return condition(n, 'Ready')?.status === 'Unknown' ? n : undefined;
      },
      OUTAGE_MS - 5000,
      1000,
    );
    expect(condition(unknown, 'Ready')?.reason).toBe('NodeStatusUnknown');
    expect(await healthz()).toBe(200);
    await new Promise((r) => setTimeout(r, Math.max(0, frozenAt + OUTAGE_MS - Date.now())));
    expect(await healthz()).toBe(200);
    freezePeer(apiserver.peer, false);
  }, 120_000);

  it('is Ready again within 15 s of the return; no container restarted', async () => {
    const node = await eventually(
      'node Ready=True after the return',
      async () => {
        const n = await k.core.readNode({ name: nodeName });
        return condition(n, 'Ready')?.status === 'True' ? n : undefined;
      },
      15_000,
      500,
    );
    expect(condition(node, 'Ready')?.reason).toBe('KubeletReady');
    const pods = await listPods();
    expect(pods).toHaveLength(PODS);
    for (const p of pods) {
      const cs = p.status!.containerStatuses![0]!;
      expect({ pod: p.metadata!.name, running: running(p), restartCount: cs.restartCount, containerID: cs.containerID }).toEqual({
        pod: p.metadata!.name,
        running: true,
        restartCount: 0,
        containerID: before.get(p.metadata!.name!),
      });
    }
  });

  it('runs a pod created after the return', async () => {
    await create('after');
    await eventually(
      'pod created after the return Running',
      async () => running(await k.core.readNamespacedPod({ name: 'after', namespace: ns })),
      60_000,
      500,
    );
  });
});

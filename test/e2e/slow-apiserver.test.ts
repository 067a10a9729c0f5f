/**
 * A slow, then throttling apiserver: nodelet talks to its own kube-apiserver (a second one
 * on the shared etcd) through a fault-injecting HTTPS proxy (test/harness/faulty-apiserver-proxy.ts)
 * that presents the node's client certificate upstream. With 10 sleeping pods running:
 *
 * (a) latency: 500 ms before every answer for 20 s. The pods keep running, the node stays
 *     Ready, a pod created meanwhile starts and its status reaches the apiserver, and the
 *     request rate stays that of an idle node.
 * (b) throttle: every non-watch request answered 429 with `Retry-After: 1` for 20 s, while
 *     2 sleeping pods are deleted and 2 pods that exit 0 after 2 s are created. nodelet
 *     waits as told before trying again (as client-go does), so its request rate stays low.
 * (c) back to normal: within 15 s the apiserver has every pod's last status (the quick pods
 *     Succeeded with exit code 0, the deleted pods gone, no container restarted) and the
 *     node is Ready.
 *
 * Request rates (per verb and resource) are measured at the proxy and printed.
 */
import { readFileSync } from 'node:fs';
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { issueNodeCredentials, startExtraApiServer, type ExtraApiServer } from '../cluster/control-plane.ts';
import { startFaultyApiServerProxy, type FaultyApiServerProxy, type RequestRates } from '../harness/faulty-apiserver-proxy.ts';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, condition, eventually, podNamespace, waitNodeReady } from './support/kube.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

const PODS = 10;
const PHASE_MS = 20_000;

/** The client certificate and key a kubeconfig written by the harness names. */
function kubeconfigClient(kubeconfig: string): { cert: string; key: string } {
  const text = readFileSync(kubeconfig, 'utf8');
  const field = (name: string) => new RegExp(`^\\s*${name}: (.+)$`, 'm').exec(text)![1]!.trim();
  return { cert: field('client-certificate'), key: field('client-key') };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('slow or throttling apiserver', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'slow-api-n1';
  let apiserver: ExtraApiServer;
  let proxy: FaultyApiServerProxy;
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  let image: string;
  /** containerID of each sleeping pod's container. */
  const containerIds = new Map<string, string>();
  const measured: Record<string, RequestRates> = {};

  beforeAll(async () => {
    reg = await startRegistry();
    image = await pushModule(reg, 'sleep');
    apiserver = await startExtraApiServer(info, { verifyKubelets: true });
    // The node's identity, presented upstream by the proxy (startNodelet issues the same one again).
    const client = kubeconfigClient(issueNodeCredentials(info, nodeName).kubeconfig);
    proxy = await startFaultyApiServerProxy(info, { upstream: apiserver.server, client, settings: { latencyMs: 500, status: 429, retryAfterSeconds: 1 } });
    nodelet = await startNodelet({ ...info, server: proxy.url }, nodeName, ['--node-status-update-frequency=10s']);
    ns = await podNamespace(k.core, 'slow-api');
    await waitNodeReady(k.core, nodeName);
  });
  afterAll(async () => {
    if (proxy) proxy.mode = 'normal';
    console.log(`requests nodelet made per phase: ${JSON.stringify(measured, null, 1)}`);
    await nodelet?.dispose();
    await proxy?.close();
    await apiserver?.peer.stop('SIGTERM', 10_000);
    await reg?.stop();
  });

  const create = (name: string, spec: Partial<V1PodSpec> = {}, args = ['3600']) =>
    k.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name },
        spec: {
          tolerations: [WASM_TOLERATION],
          nodeSelector: { 'kubernetes.io/hostname': nodeName },
          containers: [{ name: 'main', image, args }],
          ...spec,
        } as V1PodSpec,
      },
    });
  const running = (p: V1Pod) => p.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.state?.running !== undefined;
  const listPods = async () => (await k.core.listNamespacedPod({ namespace: ns })).items;
  const healthz = async () => (await fetch(`http://127.0.0.1:${nodelet.healthzPort}/healthz`)).status;
  const nodeReady = async () => condition(await k.core.readNode({ name: nodeName }), 'Ready');
  const sleepers = () => [...containerIds.keys()];
  /** Sleeping pods deleted, and pods that exit 0 after 2 s created, while the apiserver throttles. */
  const deleted = ['sleeper-0', 'sleeper-1'];
  const quick = ['quick-0', 'quick-1'];

  /** A sleeping pod as the apiserver should show it: running, Ready, its first container, no restart. */
  const sleeperAsBefore = (p: V1Pod) => ({
    pod: p.metadata!.name,
    running: running(p),
    ready: p.status?.conditions?.find((c) => c.type === 'Ready')?.status,
    restartCount: p.status?.containerStatuses?.[0]?.restartCount,
    containerID: p.status?.containerStatuses?.[0]?.containerID,
  });
  const expectedSleeper = (name: string) => ({ pod: name, running: true, ready: 'True', restartCount: 0, containerID: containerIds.get(name) });

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
    for (const p of pods) containerIds.set(p.metadata!.name!, p.status!.containerStatuses![0]!.containerID!);
    // Settled: the burst's status posts and events are out before the phases are measured.
    await sleep(3000);
    measured.start = proxy.rates({ from: proxy.requests[0]!.at, to: Date.now() });
  }, 180_000);

  it('with 500 ms added to every answer for 20 s: pods keep running, the node stays Ready, a new pod starts; the request rate stays bounded', async () => {
    proxy.mode = 'latency';
    const from = Date.now();
    await create('during-latency');
    await eventually(
      'the pod created during the latency Running on the apiserver',
      async () => running(await k.core.readNamespacedPod({ name: 'during-latency', namespace: ns })),
      PHASE_MS,
      500,
    );
    await sleep(Math.max(0, from + PHASE_MS - Date.now()));
    const to = Date.now();
    proxy.mode = 'normal';
    measured.latency = proxy.rates({ from, to });
    expect((await nodeReady())?.status).toBe('True');
    expect(await healthz()).toBe(200);
    const pods = await listPods();
    for (const name of sleepers()) expect(sleeperAsBefore(pods.find((p) => p.metadata!.name === name)!)).toEqual(expectedSleeper(name));
    // An idle node renews its Lease and reads its Node every 10 s; the new pod's start is a
    // handful of requests (token, status posts, events). Latency must not turn into retries.
    expect(measured.latency.perSecond).toBeLessThanOrEqual(2);
    expect(measured.latency.refused).toBe(0);
    containerIds.set('during-latency', (await k.core.readNamespacedPod({ name: 'during-latency', namespace: ns })).status!.containerStatuses![0]!.containerID!);
  }, 60_000);

  it('with every non-watch request answered 429 + Retry-After: 1 for 20 s while pods change: few requests, each refusal waited out', async () => {
    proxy.mode = 'throttle';
    const from = Date.now();
    await Promise.all(deleted.map((name) => k.core.deleteNamespacedPod({ name, namespace: ns, gracePeriodSeconds: 1 })));
    for (const name of deleted) containerIds.delete(name);
    // They need no API call to start (no service-account token): they run and finish while throttled.
    await Promise.all(quick.map((name) => create(name, { restartPolicy: 'Never', automountServiceAccountToken: false }, ['2'])));
    await sleep(Math.max(0, from + PHASE_MS - Date.now()));
    const to = Date.now();
    proxy.mode = 'normal';
    measured.throttle = proxy.rates({ from, to });
    const gaps = proxy.gapsAfterRefusal({ from, to }).sort((a, b) => a - b);
    console.log(`throttle: ${gaps.length} refused requests sent again, after (ms) ${JSON.stringify(gaps)}; node ${JSON.stringify(await nodeReady())}`);
    expect(await healthz()).toBe(200);
    expect(measured.throttle.refused).toBeGreaterThan(0);
    // Retry-After honoured: a refused request (same method and path) comes back no sooner than 1 s later.
    expect(gaps.length).toBeGreaterThan(0);
    expect(gaps[0]).toBeGreaterThanOrEqual(950);
    // client-go sends a refused request again after Retry-After, so each request waiting costs one
    // request a second: upstream's kubelet, whose status manager posts and deletes one pod at a time,
    // would send about 4 a second (status manager, node status, Lease, events). nodelet holds all of
    // its requests while refused (core/kube/retry-after.ts): about one a second, after the requests
    // already on their way when the throttling began.
    expect(measured.throttle.perSecond).toBeLessThanOrEqual(2);
    expect(measured.throttle.peakPerSecond).toBeLessThanOrEqual(5);
  }, 60_000);

  it('has every pod status and the node Ready on the apiserver within 15 s of the return', async () => {
    const back = Date.now();
    /** What the apiserver shows wrong (empty when every pod's status is as it is), each time it changed. */
    const timeline: string[] = [];
    let last: string[] = [];
    const wrong = async (): Promise<string[]> => {
      const pods = new Map((await listPods()).map((p) => [p.metadata!.name!, p]));
      const out: string[] = [];
      for (const name of deleted) if (pods.has(name)) out.push(`${name} still there`);
      for (const name of quick) {
        const p = pods.get(name);
        const state = p?.status?.containerStatuses?.[0]?.state;
        // Finished while the apiserver refused: the final status was held until it could be posted.
        const finishedAt = state?.terminated?.finishedAt ? new Date(state.terminated.finishedAt).getTime() : Infinity;
        if (p?.status?.phase !== 'Succeeded' || state?.terminated?.exitCode !== 0 || finishedAt > back + 1000)
          out.push(`${name} ${p?.status?.phase} ${JSON.stringify(state)}`);
      }
      for (const name of sleepers()) {
        const p = pods.get(name);
        const shown = p && sleeperAsBefore(p);
        if (JSON.stringify(shown) !== JSON.stringify(expectedSleeper(name))) out.push(`${name} ${JSON.stringify(shown)}`);
      }
      if ((await nodeReady())?.status !== 'True') out.push('node not Ready');
      if (JSON.stringify(out) !== JSON.stringify(last)) timeline.push(`${Date.now() - back} ms: ${out.length ? out.join('; ') : 'all right'}`);
      last = out;
      return out;
    };
    try {
      await eventually('every pod status as it is and the node Ready', async () => (await wrong()).length === 0, 15_000, 250);
    } finally {
      console.log(`after the return:\n${timeline.join('\n')}`);
    }
    measured.recovery = proxy.rates({ from: back, to: Date.now() });
  }, 60_000);
});

/**
 * Readiness probes drive Service endpoints, end to end: a serving Wasm pod (the C
 * preview1 server on its pre-opened socket, on its own pod IP) with an httpGet
 * readiness probe against that IP is Running but not Ready, and listed as a not-ready
 * endpoint by the real EndpointSlice controller, until its first probe succeeds; then
 * it is Ready and its endpoint is ready (with a pod that is not
 * hostNetwork). nodelet runs in a network namespace of the test's own, so the pod IP and the
 * probes' traffic to it stay inside that namespace.
 */
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { startIsolatedNodelet, type NodeletProcess } from './support/nodelet-process.ts';
import { netnsUnavailable } from '../harness/test-network.ts';

const unavailable = netnsUnavailable();

describe.skipIf(unavailable !== undefined)(`readiness probes and Service endpoints (skipped where the machine ${unavailable ?? 'lacks CAP_NET_ADMIN'})`, () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const discovery = k.kc.makeApiClient(k8s.DiscoveryV1Api);
  const nodeName = 'probe-eps-n1';
  const app = 'probed-web';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  let image: string;

  beforeAll(async () => {
    reg = await startRegistry();
    image = await pushModule(reg, 'http-server');
    nodelet = await startIsolatedNodelet(info, nodeName, { forward: [Number(new URL(reg.url).port)] });
    ns = await podNamespace(k.core, 'probe-eps');
    await waitNodeReady(k.core, nodeName);
    await eventually('the node pod CIDR', async () => (await k.core.readNode({ name: nodeName })).spec?.podCIDR);
  }, 600_000);
  afterAll(async () => {
    await nodelet?.dispose();
    await reg?.stop();
  });

  /** The endpoint of `ip` in the Service's EndpointSlices, if listed. */
  const endpointOf = async (ip: string) => {
    const slices = await discovery.listNamespacedEndpointSlice({ namespace: ns, labelSelector: `kubernetes.io/service-name=${app}` });
    return slices.items.flatMap((s) => s.endpoints ?? []).find((e) => e.addresses.includes(ip));
  };
  const condition = (p: k8s.V1Pod, type: string) => p.status?.conditions?.find((c) => c.type === type)?.status;

  it('the pod is Running but not Ready and its endpoint not ready until the probe passes; then both are ready', async () => {
    await k.core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name: app }, spec: { selector: { app }, ports: [{ port: 80, targetPort: 8080 }] } },
    });
    await k.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'web', labels: { app } },
        spec: {
          nodeName,
          tolerations: [WASM_TOLERATION],
          containers: [
            {
              name: 'main',
              image,
              ports: [{ containerPort: 8080 }],
              // No probe runs during the initial delay: readiness starts as failed, as upstream.
              readinessProbe: { httpGet: { path: '/ready', port: 8080 }, initialDelaySeconds: 12, periodSeconds: 1 },
            },
          ],
        },
      },
    });
    const running = await podUntil(k.core, ns, 'web', 'Running with an IP', (p) => p.status?.phase === 'Running' && !!p.status.podIP);
    const ip = running.status!.podIP!;
    expect(ip).not.toBe('127.0.0.1');
    expect(condition(running, 'Ready')).toBe('False');
    expect(running.status?.containerStatuses?.[0]?.ready).toBe(false);
    const notReady = await eventually('a not-ready endpoint for the pod', async () => {
      const e = await endpointOf(ip);
      return e && e.conditions?.ready === false ? e : undefined;
    });
    expect(notReady.targetRef?.name).toBe('web');

    const ready = await podUntil(k.core, ns, 'web', 'Ready', (p) => condition(p, 'Ready') === 'True', 90_000);
    expect(condition(ready, 'ContainersReady')).toBe('True');
    expect(ready.status?.containerStatuses?.[0]?.ready).toBe(true);
    expect(ready.status?.containerStatuses?.[0]?.restartCount).toBe(0);
    const readyEp = await eventually('the endpoint ready', async () => {
      const e = await endpointOf(ip);
      return e?.conditions?.ready === true ? e : undefined;
    });
    expect(readyEp.addresses).toEqual([ip]);
  });
});

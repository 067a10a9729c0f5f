/**
 * WASI 0.2 components end to end, built from test/fixtures/components with cargo
 * (wasm32-wasip2) and pushed to a real registry: a wasi:cli component reading a configMap and an
 * env var ends Failed with its exit code and its output in `kubectl logs`; a wasi:http component
 * (pushed in the layout wkg writes) answers on its pod IP (127.0.0.1 when the node has no pod
 * network) with the pod's name; 3 replicas of it behind a Service get distinct pod IPs and ready
 * endpoints, each answering with its own name; a component importing an interface nodelet does
 * not provide stays waiting with the interface named, and an event says it.
 * nodelet runs in a network namespace of the test's own: the pod IPs exist only there, and
 * the test's requests to them are made from inside (test/harness/test-network.ts).
 */
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { pushComponent, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { kubectl } from './support/kubectl.ts';
import { startIsolatedNodelet, type NodeletProcess } from './support/nodelet-process.ts';
import { freePort } from '../harness/ports.ts';
import { netnsUnavailable, type TestHost } from '../harness/test-network.ts';

const unavailable = netnsUnavailable();

describe.skipIf(unavailable !== undefined)(`WASI 0.2 components (skipped where the machine ${unavailable ?? 'lacks CAP_NET_ADMIN'})`, () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'components-n1';
  let nodelet: NodeletProcess & { host: TestHost };
  let reg: TestRegistry;
  let ns: string;
  const img: Record<string, string> = {};

  beforeAll(async () => {
    reg = await startRegistry();
    img.cli = await pushComponent(reg, 'cli-read');
    img.http = await pushComponent(reg, 'hello-http', 'wkg');
    img.unsupported = await pushComponent(reg, 'unsupported-import');
    nodelet = await startIsolatedNodelet(info, nodeName, { forward: [Number(new URL(reg.url).port)] });
    ns = await podNamespace(k.core, 'components');
    await waitNodeReady(k.core, nodeName);
  }, 600_000);
  afterAll(async () => {
    await nodelet?.dispose();
    await reg?.stop();
  });

  const create = (name: string, spec: Partial<V1PodSpec>) =>
    k.core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name }, spec: { nodeName, tolerations: [WASM_TOLERATION], restartPolicy: 'Never', containers: [], ...spec } as V1PodSpec },
    });
  const logs = (name: string) => kubectl(info, ['logs', '-n', ns, name]).stdout;
  /** GET from inside the node's network namespace. */
  const get = (ip: string, port: number, path = '/') => nodelet.host.httpGet(ip, port, path);

  it('a wasi:cli component reads a configMap volume and an env var, writes to stdout and exits 3 → Failed, exit code 3', async () => {
    await k.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'cli-config' }, data: { message: 'from the configMap' } } });
    await create('cli', {
      volumes: [{ name: 'config', configMap: { name: 'cli-config' } }],
      containers: [
        {
          name: 'main',
          image: img.cli!,
          args: ['/config/message', '--write', '/config/new'],
          env: [{ name: 'GREETING', value: 'hello from env' }],
          volumeMounts: [{ name: 'config', mountPath: '/config' }],
        },
      ],
    });
    const pod = await podUntil(k.core, ns, 'cli', 'Failed', (p: V1Pod) => p.status?.phase === 'Failed', 120_000);
    expect(pod.status!.containerStatuses![0]!.state!.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
    const out = logs('cli');
    expect(out).toContain('greeting: hello from env\n');
    expect(out).toContain('file /config/message: from the configMap\n');
    // configMap volumes are read-only
    expect(out).toMatch(/write \/config\/new: error: .*[Rr]ead-only/);
    expect(out).toContain('exiting with 3\n');
  });

  it('a wasi:http component (wkg layout) answers on its pod IP and first TCP port with its pod name', async () => {
    const port = await freePort();
    await create('web', {
      restartPolicy: 'Always',
      containers: [
        {
          name: 'main',
          image: img.http!,
          ports: [{ containerPort: port }],
          env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
        },
      ],
    });
    const pod = await podUntil(k.core, ns, 'web', 'Ready', (p: V1Pod) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True', 120_000);
    // No pod network on this node unless it has a pod CIDR: the component listens on 127.0.0.1 then.
    const host = pod.status?.podIP && pod.status.podIP !== '127.0.0.1' ? pod.status.podIP : '127.0.0.1';
    expect(await get(host, port, '/hello')).toEqual({ status: 200, body: 'hello from web\n' });
    await k.core.deleteNamespacedPod({ name: 'web', namespace: ns, gracePeriodSeconds: 0 });
    await eventually('web gone', async () => {
      try {
        await k.core.readNamespacedPod({ name: 'web', namespace: ns });
        return undefined;
      } catch {
        return true;
      }
    });
    // A deletion with grace 0 removes the object at once; nodelet stops the container after it.
    await eventually(
      'the listener closed',
      () =>
        get(host, port, '/hello').then(
          () => undefined,
          () => true,
        ),
      10_000,
    );
  });

  it('a Deployment of 3 wasi:http replicas: distinct pod IPs, a Service with 3 ready endpoints, each answering with its pod name; a deleted pod leaves the endpoints', async () => {
    const discovery = k.kc.makeApiClient(k8s.DiscoveryV1Api);
    const app = 'hello-web';
    const podCIDR = await eventually('the node pod CIDR', async () => (await k.core.readNode({ name: nodeName })).spec?.podCIDR);
    const prefix = podCIDR.split('.').slice(0, 3).join('.') + '.';
    await k.apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: app },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app } },
          template: {
            metadata: { labels: { app } },
            spec: {
              nodeName,
              tolerations: [WASM_TOLERATION],
              terminationGracePeriodSeconds: 1,
              containers: [
                {
                  name: 'main',
                  image: img.http!,
                  ports: [{ containerPort: 8080 }],
                  env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
                },
              ],
            },
          },
        },
      },
    });
    await k.core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name: app }, spec: { selector: { app }, ports: [{ port: 80, targetPort: 8080 }] } },
    });
    const appPods = async () =>
      (await k.core.listNamespacedPod({ namespace: ns, labelSelector: `app=${app}` })).items.filter((p) => !p.metadata?.deletionTimestamp);
    const ready = (p: V1Pod) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' && !!p.status.podIP;
    const pods = await eventually('3 ready pods with IPs', async () => {
      const p = await appPods();
      return p.length === 3 && p.every(ready) ? p : undefined;
    });
    const ips = pods.map((p) => p.status!.podIP!).sort();
    expect(new Set(ips).size).toBe(3);
    for (const ip of ips) expect(ip.startsWith(prefix), `${ip} in ${podCIDR}`).toBe(true);
    const readyEndpoints = async () =>
      (await discovery.listNamespacedEndpointSlice({ namespace: ns, labelSelector: `kubernetes.io/service-name=${app}` })).items
        .flatMap((x) => x.endpoints ?? [])
        .filter((e) => e.conditions?.ready === true)
        .flatMap((e) => e.addresses)
        .sort();
    await eventually('3 ready endpoints', async () => JSON.stringify(await readyEndpoints()) === JSON.stringify(ips));
    // Each endpoint answers with the name of the pod holding that IP.
    for (const p of pods) {
      expect((await get(p.status!.podIP!, 8080)).body).toBe(`hello from ${p.metadata!.name}\n`);
    }
    const victim = pods[0]!;
    await k.core.deleteNamespacedPod({ name: victim.metadata!.name!, namespace: ns });
    await eventually(
      'the deleted pod gone',
      async () => !(await k.core.listNamespacedPod({ namespace: ns })).items.some((p) => p.metadata!.uid === victim.metadata!.uid),
    );
    const now = await eventually('3 ready pods again', async () => {
      const p = await appPods();
      return p.length === 3 && p.every(ready) ? p : undefined;
    });
    const nowIPs = now.map((p) => p.status!.podIP!).sort();
    await eventually('the endpoints are the pods now there', async () => JSON.stringify(await readyEndpoints()) === JSON.stringify(nowIPs));
    for (const p of now) expect((await get(p.status!.podIP!, 8080)).body).toBe(`hello from ${p.metadata!.name}\n`);
    // Unless its IP was given to the replacement, nothing answers on the deleted pod's IP any more.
    if (!nowIPs.includes(victim.status!.podIP!)) await expect(get(victim.status!.podIP!, 8080)).rejects.toThrow();
    await k.apps.deleteNamespacedDeployment({ name: app, namespace: ns });
  });

  it('a component importing an interface nodelet does not provide stays waiting with the interface named, and an event says it', async () => {
    await create('unsupported', { containers: [{ name: 'main', image: img.unsupported! }] });
    const pod = await podUntil(
      k.core,
      ns,
      'unsupported',
      'CreateContainerError',
      (p: V1Pod) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerError',
      120_000,
    );
    const waiting = pod.status!.containerStatuses![0]!.state!.waiting!;
    expect(waiting.message).toMatch(/imports nodelet-test:absent\/ping@0\.1\.0, which nodelet does not provide/);
    const events = await eventually('Failed event', async () => {
      const list = await k.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=unsupported,reason=Failed' });
      return list.items.length > 0 ? list.items : undefined;
    });
    expect(events[0]!.message).toContain('nodelet-test:absent/ping@0.1.0');
    // nodelet is unaffected: its node stays Ready
    await waitNodeReady(k.core, nodeName);
  });
});

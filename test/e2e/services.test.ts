/**
 * Kubernetes Services for Wasm pods on one node, without kube-proxy: nodelet's Service resolver
 * (core/services) answers the pods' own outbound paths. Backends are wasi:http pods of a real
 * Deployment (hello-http: `hello from <pod>`) behind real Services whose EndpointSlices the real
 * kube-controller-manager makes; clients are a wasi:http pod calling out through nodelet's own
 * host (hello-http's `/fetch/<host>/`), a wasi:cli component through jco and preview2-shim
 * (http-get) and a preview1 module's wasi_experimental_http (http-fetch). They reach the Service
 * by ClusterIP and by every name their search path completes; ClientIP affinity holds; a headless
 * Service's name and an ExternalName alias resolve; with the Deployment scaled to 0 a connection
 * is refused at once (connection-refused, not a timeout), and scaled up again it is served.
 * The node may list Services as upstream's Node authorizer allows, and EndpointSlices once the
 * binding of deploy/rbac/node-endpointslices.yaml is applied (checked with SubjectAccessReviews).
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pushWasmArtifact } from '../harness/oci-push.ts';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { buildRustModule } from '../harness/rust-modules.ts';
import { until } from '../harness/until.ts';
import { pushComponent, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { kubectl } from './support/kubectl.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

const RBAC = resolve(import.meta.dirname, '..', '..', 'deploy', 'rbac', 'node-endpointslices.yaml');

describe('Services for Wasm pods without kube-proxy', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const discovery = k.kc.makeApiClient(k8s.DiscoveryV1Api);
  const authz = k.kc.makeApiClient(k8s.AuthorizationV1Api);
  const nodeName = 'services-n1';
  const img: Record<string, string> = {};
  const agent = new Agent({ keepAliveTimeout: 10_000, headersTimeout: 30_000, bodyTimeout: 30_000 });
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  let clusterIP: string;
  /** The client pod's base URL (its pod IP, port 8080). */
  let client: string;

  /** May the node list `resource` of `group` cluster-wide? (asked as the node's identity) */
  const nodeMay = async (group: string, resource: string) =>
    (
      await authz.createSubjectAccessReview({
        body: {
          spec: {
            user: `system:node:${nodeName}`,
            groups: ['system:nodes', 'system:authenticated'],
            resourceAttributes: { group, resource, verb: 'list' },
          },
        },
      })
    ).status?.allowed === true;

  /** GET `<client>/fetch/<target>`: the client component's own outgoing request, and its answer. */
  const fetchVia = async (target: string) => {
    const res = await request(`${client}/fetch/${target}`, { dispatcher: agent });
    return res.body.text();
  };
  const isReady = (p: V1Pod) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  /** The ready endpoints of Service `name`, from its EndpointSlices. */
  const readyEndpoints = async (name: string) =>
    (await discovery.listNamespacedEndpointSlice({ namespace: ns, labelSelector: `kubernetes.io/service-name=${name}` })).items
      .flatMap((s) => s.endpoints ?? [])
      .filter((e) => e.conditions?.ready !== false);
  const webPods = async () => (await k.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=web' })).items.filter((p) => !p.metadata?.deletionTimestamp);
  const create = (name: string, spec: Partial<V1PodSpec>, annotations?: Record<string, string>) =>
    k.core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name, annotations }, spec: { nodeName, tolerations: [WASM_TOLERATION], containers: [], ...spec } as V1PodSpec },
    });
  const finishedLogs = async (name: string) => {
    await podUntil(k.core, ns, name, 'finished', (p) => ['Succeeded', 'Failed'].includes(p.status?.phase ?? ''), 120_000);
    return kubectl(info, ['logs', '-n', ns, name]).stdout;
  };
  const scale = (replicas: number) => {
    const r = kubectl(info, ['scale', 'deployment/web', `--replicas=${replicas}`, '-n', ns]);
    expect(r.status, r.stderr).toBe(0);
  };

  beforeAll(async () => {
    reg = await startRegistry();
    img.web = await pushComponent(reg, 'hello-http');
    img.get = await pushComponent(reg, 'http-get');
    await pushWasmArtifact(reg.host, 'http-fetch', 'v1', await readFile(await buildRustModule('http-fetch')), { format: 'cncf' });
    img.fetch = `${reg.host}/http-fetch:v1`;
    // What upstream gives a node: Services, not EndpointSlices (kube-proxy's role has those); the
    // binding nodelet documents adds them. (Checked only while the binding is not there yet.)
    expect(await nodeMay('', 'services')).toBe(true);
    const bound = await k.kc
      .makeApiClient(k8s.RbacAuthorizationV1Api)
      .readClusterRoleBinding({ name: 'nodelet:endpointslice-reader' })
      .then(
        () => true,
        () => false,
      );
    if (!bound) expect(await nodeMay('discovery.k8s.io', 'endpointslices')).toBe(false);
    const applied = kubectl(info, ['apply', '-f', RBAC]);
    expect(applied.status, applied.stderr).toBe(0);
    await eventually('the node may list EndpointSlices', async () => (await nodeMay('discovery.k8s.io', 'endpointslices')) || undefined);

    nodelet = await startNodelet(info, nodeName, ['--cluster-domain=cluster.local']);
    ns = await podNamespace(k.core, 'services');
    await waitNodeReady(k.core, nodeName);
    const container = { name: 'main', image: img.web, ports: [{ name: 'http', containerPort: 8080 }] };
    await k.apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: {
              nodeName,
              tolerations: [WASM_TOLERATION],
              containers: [{ ...container, env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }] }],
            },
          },
        },
      },
    });
    const svc = (name: string, spec: k8s.V1ServiceSpec) => k.core.createNamespacedService({ namespace: ns, body: { metadata: { name }, spec } });
    // Port 80 to the pods' port named `http` (the EndpointSlice controller resolves the name per pod).
    clusterIP = (await svc('web', { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 'http' }] })).spec!.clusterIP!;
    await svc('web-sticky', { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 'http' }], sessionAffinity: 'ClientIP' });
    await svc('web-headless', { selector: { app: 'web' }, clusterIP: 'None', ports: [{ port: 8080, targetPort: 'http' }] });
    await svc('web-alias', { type: 'ExternalName', externalName: `web.${ns}.svc.cluster.local` });
    await create('client', { restartPolicy: 'Always', containers: [{ name: 'main', image: img.web, ports: [{ containerPort: 8080 }] }] });
    const pod = await podUntil(k.core, ns, 'client', 'Ready', isReady, 120_000);
    expect(pod.status?.podIP, 'the client pod has an IP from the node’s pod CIDR').not.toBe('127.0.0.1');
    client = `http://${pod.status!.podIP}:8080`;
    await eventually('3 ready endpoints of Service web', async () => ((await readyEndpoints('web')).length === 3 ? true : undefined), 120_000);
    await eventually('3 ready endpoints of Service web-headless', async () => ((await readyEndpoints('web-headless')).length === 3 ? true : undefined), 60_000);
  }, 600_000);
  afterAll(async () => {
    await agent.close();
    await nodelet?.dispose();
    await reg?.stop();
  });

  // Upstream: test/e2e/network/service.go, "should serve a basic endpoint from pods" (by ClusterIP),
  // and test/e2e/network/dns.go, "should provide DNS for services" (the names, from a pod).
  it('a wasi:http component reaches the Service by ClusterIP and by every name its search path completes', async () => {
    const names = [`${clusterIP}:80`, 'web', `web.${ns}`, `web.${ns}.svc`, `web.${ns}.svc.cluster.local`, `web.${ns}.svc.cluster.local.`];
    // The first answers may come while the client's node still learns the Service (the watch).
    await until('the Service answers by ClusterIP', async () => (await fetchVia(`${clusterIP}:80/`)).startsWith('fetched 200: hello from web-'), 10_000);
    for (const name of names) expect(await fetchVia(`${name}/`), name).toMatch(/^fetched 200: hello from web-[a-z0-9]+-[a-z0-9]+\n\n$/);
  });

  it('spreads connections over the ready endpoints', async () => {
    const pods = new Set<string>();
    for (let i = 0; i < 30; i++) pods.add((await fetchVia('web/')).replace(/^fetched 200: hello from /, '').trim());
    // 3 endpoints picked at random: all 30 on the same one would happen once in 3^29.
    expect(pods.size, [...pods].join(', ')).toBeGreaterThan(1);
    const names = new Set((await webPods()).map((p) => p.metadata!.name!));
    for (const p of pods) expect(names.has(p), `${p} is a pod of the Deployment`).toBe(true);
  });

  // Upstream: test/e2e/network/service.go, "should have session affinity work for service with type clusterIP [LinuxOnly]"
  // (15 requests from one client reach one backend).
  it('sessionAffinity ClientIP: 15 connections from one pod all reach the same endpoint', async () => {
    const answers = new Set<string>();
    for (let i = 0; i < 15; i++) answers.add(await fetchVia('web-sticky/'));
    expect([...answers]).toHaveLength(1);
    expect([...answers][0]).toMatch(/^fetched 200: hello from web-/);
  });

  it('a headless Service’s name reaches one of its pods directly; an ExternalName alias resolves through the cluster', async () => {
    expect(await fetchVia(`web-headless.${ns}.svc.cluster.local:8080/`)).toMatch(/^fetched 200: hello from web-/);
    expect(await fetchVia('web-alias/')).toMatch(/^fetched 200: hello from web-/);
    // A name under svc.cluster.local that no Service has: a DNS error, not a connection.
    expect(await fetchVia(`nosuch.${ns}.svc.cluster.local/`)).toMatch(/^fetch failed: ErrorCode::DnsError/);
  });

  it('a wasi:cli component (jco, preview2-shim) and a preview1 module (wasi_experimental_http) reach the Service too', async () => {
    await create('get', {
      restartPolicy: 'Never',
      containers: [{ name: 'main', image: img.get, args: [`http://${clusterIP}/`, `http://web.${ns}.svc.cluster.local/`] }],
    });
    await create(
      'fetch',
      { restartPolicy: 'Never', containers: [{ name: 'main', image: img.fetch, args: [`http://web.${ns}.svc.cluster.local/`] }] },
      { 'alpha.wasi.krustlet.dev/allowed-domains': '["insecure:allow-all"]' },
    );
    const got = await finishedLogs('get');
    expect(got).toMatch(new RegExp(`^http://${clusterIP.replaceAll('.', '\\.')}/ -> 200 hello from web-\\S+\\n`));
    expect(got).toMatch(new RegExp(`\\nhttp://web\\.${ns}\\.svc\\.cluster\\.local/ -> 200 hello from web-\\S+\\n$`));
    const fetched = await finishedLogs('fetch');
    expect(fetched).toContain('status 200');
    expect(fetched).toMatch(/body hello from web-/);
  });

  // Upstream: test/e2e/network/service.go, "should be rejected when no endpoints exist" (REFUSED, not a timeout).
  it('scaled to 0: a connection is refused at once (connection-refused, also through jco); scaled up again: served', async () => {
    scale(0);
    await eventually('no ready endpoint of Service web', async () => ((await readyEndpoints('web')).length === 0 ? true : undefined), 120_000);
    // A ClusterIP nobody translated would hang until a connect timeout: the answer is a refusal.
    await until('the refusal reaches the client', async () => (await fetchVia(`${clusterIP}:80/`)) === 'fetch failed: ErrorCode::ConnectionRefused\n', 10_000);
    expect(await fetchVia('web/')).toBe('fetch failed: ErrorCode::ConnectionRefused\n');
    await create('get-none', { restartPolicy: 'Never', containers: [{ name: 'main', image: img.get, args: [`http://web.${ns}.svc.cluster.local/`] }] });
    expect(await finishedLogs('get-none')).toBe(`http://web.${ns}.svc.cluster.local/ -> error ErrorCode::ConnectionRefused\n`);

    scale(1);
    await eventually('a ready endpoint of Service web again', async () => ((await readyEndpoints('web')).length === 1 ? true : undefined), 120_000);
    await until('the Service answers again', async () => (await fetchVia('web/')).startsWith('fetched 200: hello from web-'), 10_000);
  });
});

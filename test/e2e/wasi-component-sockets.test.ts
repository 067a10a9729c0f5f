/**
 * wasi:sockets for WASI 0.2 components and the pod's outbound allow-list, end to end against the
 * real control plane. The sockets-client component (cargo wasm32-wasip2, the `wasi` crate's
 * wasi:sockets) talks TCP to an echo server the test runs on loopback, and to a real Service's
 * ClusterIP and name (a hello-http pod behind it; the EndpointSlice is the real controller's),
 * with nodelet's Service resolver in place of kube-proxy. With `wasi.nodelet.dev/allowed-outbound-hosts`
 * on the pod, a connect outside the list fails with wasi:sockets' access-denied and an HTTP request
 * (http-get, wasi:http/outgoing-handler) with HTTP-request-denied, as Spin answers; inside, both go
 * through, on the jco path (http-get) and on nodelet's per-request host (hello-http's /fetch/).
 */
import { resolve } from 'node:path';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { pushComponent, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { kubectl } from './support/kubectl.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

const RBAC = resolve(import.meta.dirname, '..', '..', 'deploy', 'rbac', 'node-endpointslices.yaml');
const ALLOW = 'wasi.nodelet.dev/allowed-outbound-hosts';

describe('wasi:sockets for components, and the outbound allow-list', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const discovery = k.kc.makeApiClient(k8s.DiscoveryV1Api);
  const nodeName = 'csockets-n1';
  const img: Record<string, string> = {};
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  let clusterIP: string;
  let echo: Server;
  let echoPort: number;
  let web: HttpServer;
  let webPort: number;
  const webSaw: string[] = [];

  const create = (name: string, spec: Partial<V1PodSpec>, annotations?: Record<string, string>) =>
    k.core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name, annotations }, spec: { nodeName, tolerations: [WASM_TOLERATION], containers: [], ...spec } as V1PodSpec },
    });
  const finishedLogs = async (name: string) => {
    const pod = await podUntil(k.core, ns, name, 'finished', (p: V1Pod) => ['Succeeded', 'Failed'].includes(p.status?.phase ?? ''), 120_000);
    expect(pod.status?.phase, kubectl(info, ['logs', '-n', ns, name]).stdout).toBe('Succeeded');
    return kubectl(info, ['logs', '-n', ns, name]).stdout;
  };

  beforeAll(async () => {
    reg = await startRegistry();
    img.client = await pushComponent(reg, 'sockets-client');
    img.get = await pushComponent(reg, 'http-get');
    img.web = await pushComponent(reg, 'hello-http');
    const applied = kubectl(info, ['apply', '-f', RBAC]);
    expect(applied.status, applied.stderr).toBe(0);
    echo = createServer((s) => s.pipe(s));
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    echoPort = (echo.address() as AddressInfo).port;
    web = createHttpServer((req, res) => {
      webSaw.push(req.url ?? '');
      res.end(`web saw ${req.url}`);
    });
    await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
    webPort = (web.address() as AddressInfo).port;
    nodelet = await startNodelet(info, nodeName, ['--cluster-domain=cluster.local']);
    ns = await podNamespace(k.core, 'csockets');
    await waitNodeReady(k.core, nodeName);
    await k.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'web', labels: { app: 'web' } },
        spec: {
          nodeName,
          tolerations: [WASM_TOLERATION],
          containers: [
            {
              name: 'main',
              image: img.web,
              ports: [{ name: 'http', containerPort: 8080 }],
              env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
            },
          ],
        },
      },
    });
    clusterIP = (
      await k.core.createNamespacedService({
        namespace: ns,
        body: { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 'http' }] } },
      })
    ).spec!.clusterIP!;
    await eventually(
      'a ready endpoint of Service web',
      async () => {
        const slices = await discovery.listNamespacedEndpointSlice({ namespace: ns, labelSelector: 'kubernetes.io/service-name=web' });
        return slices.items.flatMap((s) => s.endpoints ?? []).some((e) => e.conditions?.ready === true) ? true : undefined;
      },
      120_000,
    );
  }, 600_000);
  afterAll(async () => {
    await nodelet?.dispose();
    await reg?.stop();
    echo?.close();
    web?.close();
  });

  it('a component talks TCP to a server, and through the Service path to a ClusterIP and a Service name', async () => {
    const get = 'GET /via-sockets HTTP/1.0\r\n\r\n';
    await create('client', {
      restartPolicy: 'Never',
      containers: [
        {
          name: 'main',
          image: img.client,
          args: [
            `echo:127.0.0.1:${echoPort}:hello over wasi:sockets`,
            `echo:${clusterIP}:80:${get}`,
            'lookup:web',
            `echo-name:web.${ns}.svc.cluster.local:80:${get}`,
          ],
        },
      ],
    });
    const out = await finishedLogs('client');
    expect(out).toContain(`echo 127.0.0.1:${echoPort} -> hello over wasi:sockets\n`);
    // The raw HTTP/1.0 exchange with the hello-http pod behind the Service, by ClusterIP and by name.
    expect(out).toMatch(new RegExp(`echo ${clusterIP.replace(/\./g, '\\.')}:80 -> HTTP/1\\.1 200 OK[\\s\\S]*hello from web\\n`));
    expect(out).toContain(`lookup web -> ${clusterIP}\n`);
    expect(out).toMatch(/echo-name web\.[a-z0-9-]+\.svc\.cluster\.local:80 -> HTTP\/1\.1 200 OK[\s\S]*hello from web\n/);
  });

  it('outside the allow-list a socket connect fails with access-denied and an HTTP request with HTTP-request-denied; inside, both go through', async () => {
    await create(
      'client-allowed',
      {
        restartPolicy: 'Never',
        containers: [{ name: 'main', image: img.client, args: [`echo:127.0.0.1:${echoPort}:inside`, `echo:127.0.0.1:${webPort}:outside`] }],
      },
      { [ALLOW]: JSON.stringify([`tcp://127.0.0.1:${echoPort}`]) },
    );
    await create(
      'get-allowed',
      {
        restartPolicy: 'Never',
        containers: [{ name: 'main', image: img.get, args: [`http://127.0.0.1:${webPort}/inside`, `http://localhost:${webPort}/outside`] }],
      },
      { [ALLOW]: `http://127.0.0.1:${webPort}, tcp://*:*` },
    );
    const sockets = await finishedLogs('client-allowed');
    expect(sockets).toContain(`echo 127.0.0.1:${echoPort} -> inside\n`);
    expect(sockets).toContain(`echo 127.0.0.1:${webPort} -> error access-denied\n`);
    const http = await finishedLogs('get-allowed');
    expect(http).toContain(`http://127.0.0.1:${webPort}/inside -> 200 web saw /inside\n`);
    expect(http).toContain(`http://localhost:${webPort}/outside -> error ErrorCode::HttpRequestDenied\n`);
    expect(webSaw).toContain('/inside');
    expect(webSaw).not.toContain('/outside');
    // Each refusal is a line in the container's log, as Spin warns of a disallowed host.
    const stderr = kubectl(info, ['logs', '-n', ns, 'get-allowed']).stdout;
    expect(stderr).toContain(`nodelet: outbound http://localhost:${webPort} denied`);
  });

  it('a wasi:http component served with an instance per request: outside the allow-list its request fails with HTTP-request-denied', async () => {
    await create(
      'web-allowed',
      { restartPolicy: 'Always', containers: [{ name: 'main', image: img.web, ports: [{ containerPort: 8080 }] }] },
      { [ALLOW]: JSON.stringify([`http://127.0.0.1:${webPort}`]) },
    );
    const pod = await podUntil(
      k.core,
      ns,
      'web-allowed',
      'Ready',
      (p: V1Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
    );
    const fetchVia = async (target: string) => (await fetch(`http://${pod.status!.podIP}:8080/fetch/${target}`)).text();
    expect(await fetchVia(`127.0.0.1:${webPort}/per-request-in`)).toBe('fetched 200: web saw /per-request-in\n');
    expect(await fetchVia(`localhost:${webPort}/per-request-out`)).toBe('fetch failed: ErrorCode::HttpRequestDenied\n');
    expect(webSaw).not.toContain('/per-request-out');
  });

  it('an allow-list that does not parse keeps the container waiting with the reason', async () => {
    await create('bad-list', { restartPolicy: 'Never', containers: [{ name: 'main', image: img.client, args: ['lookup:web'] }] }, { [ALLOW]: 'example.com' });
    const pod = await podUntil(k.core, ns, 'bad-list', 'CreateContainerConfigError or CreateContainerError', (p: V1Pod) =>
      /CreateContainer/.test(p.status?.containerStatuses?.[0]?.state?.waiting?.reason ?? ''),
    );
    expect(pod.status!.containerStatuses![0]!.state!.waiting!.message).toMatch(/allowed-outbound-hosts.*"example\.com".*no scheme/);
  });
});

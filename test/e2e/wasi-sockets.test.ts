/**
 * Preview1 modules that talk to the network, end to end against the real
 * control plane: a C module serving HTTP on a pre-opened listening socket
 * (wasmtime's --tcplisten convention) on its pod IP, and a Rust module using
 * Krustlet's wasi_experimental_http to fetch from a server on the node, allowed
 * or refused by the pod's `alpha.wasi.krustlet.dev/allowed-domains` annotation.
 * nodelet runs in a network namespace of the test's own: the pod IP exists only there, and
 * the test's requests to it are made from inside (test/harness/test-network.ts).
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pushWasmArtifact } from '../harness/oci-push.ts';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { buildRustModule } from '../harness/rust-modules.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { kubectl } from './support/kubectl.ts';
import { startIsolatedNodelet, type NodeletProcess } from './support/nodelet-process.ts';
import { netnsUnavailable, type TestHost } from '../harness/test-network.ts';

const unavailable = netnsUnavailable();

describe.skipIf(unavailable !== undefined)(`WASI preview1 networking (skipped where the machine ${unavailable ?? 'lacks CAP_NET_ADMIN'})`, () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'sockets-n1';
  let nodelet: NodeletProcess & { host: TestHost };
  let reg: TestRegistry;
  let ns: string;
  let server: Server;
  let serverUrl: string;
  const served: string[] = [];
  const img: Record<string, string> = {};

  beforeAll(async () => {
    reg = await startRegistry();
    img.server = await pushModule(reg, 'http-server');
    const fetchBytes = await readFile(await buildRustModule('http-fetch'));
    await pushWasmArtifact(reg.host, 'http-fetch', 'v1', fetchBytes, { format: 'cncf' });
    img.fetch = `${reg.host}/http-fetch:v1`;
    server = createServer((req, res) => {
      served.push(req.url ?? '');
      res.end(`from the node ${req.url}`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // The registry and the server on the node, which nodelet dials on 127.0.0.1.
    nodelet = await startIsolatedNodelet(info, nodeName, { forward: [Number(new URL(reg.url).port), Number(new URL(serverUrl).port)] });
    ns = await podNamespace(k.core, 'sockets');
    await waitNodeReady(k.core, nodeName);
  }, 600_000);
  afterAll(async () => {
    await nodelet?.dispose();
    await reg?.stop();
    server?.close();
  });

  const create = (name: string, spec: Partial<V1PodSpec>, annotations?: Record<string, string>) =>
    k.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name, annotations },
        spec: { nodeName, tolerations: [WASM_TOLERATION], restartPolicy: 'Never', containers: [], ...spec } as V1PodSpec,
      },
    });
  const finished = (name: string) => podUntil(k.core, ns, name, 'finished', (p: V1Pod) => ['Succeeded', 'Failed'].includes(p.status?.phase ?? ''));
  const logs = (name: string) => kubectl(info, ['logs', '-n', ns, name]).stdout;

  it('a C module accepting on its pre-opened socket serves HTTP requests on its pod IP', async () => {
    await create('server', { containers: [{ name: 'main', image: img.server, ports: [{ containerPort: 8080 }] }] });
    const pod = await podUntil(k.core, ns, 'server', 'Running with an IP', (p) => p.status?.phase === 'Running' && !!p.status.podIP);
    const ip = pod.status!.podIP!;
    expect(ip).not.toBe('127.0.0.1'); // an address from the node's pod CIDR
    for (let n = 1; n <= 3; n++) expect(await nodelet.host.httpGet(ip, 8080)).toEqual({ status: 200, body: `hello from wasm ${n}\n` });
    // The socket comes after the preopened directories (here the service account token's volume).
    const out = logs('server');
    const fd = Number(/listening on fd (\d+)/.exec(out)?.[1]);
    expect(fd).toBeGreaterThan(3);
    expect(out).toContain(`served request 3 on fd ${fd + 1}`);
    await k.core.deleteNamespacedPod({ name: 'server', namespace: ns, gracePeriodSeconds: 0 });
  });

  it('a module with no declared port gets no socket: accept fails with an errno, nodelet is unaffected', async () => {
    await create('noports', { containers: [{ name: 'main', image: img.server }] });
    const pod = await finished('noports');
    expect(pod.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(2);
    // fd 3 is the service account token's directory: ENOTCAPABLE (76) from node:wasi.
    expect(logs('noports')).toMatch(/no socket: accept\(3\) = -1 errno (8|58|76) /);
  });

  it('wasi_experimental_http fetches from a host the annotation allows: status 200 and the body in its log', async () => {
    await create(
      'fetch-allowed',
      { containers: [{ name: 'main', image: img.fetch, args: [`${serverUrl}/allowed`] }] },
      {
        'alpha.wasi.krustlet.dev/allowed-domains': JSON.stringify([serverUrl]),
        'alpha.wasi.krustlet.dev/max-concurrent-requests': '4',
      },
    );
    const pod = await finished('fetch-allowed');
    const out = logs('fetch-allowed');
    expect(out).toContain('status 200 OK');
    expect(out).toContain('body from the node /allowed');
    expect(pod.status?.phase).toBe('Succeeded');
    expect(served).toContain('/allowed');
  });

  it('a host the annotation does not list: the module sees the library error (7, DESTINATION_NOT_ALLOWED), nothing is sent', async () => {
    await create(
      'fetch-refused',
      { containers: [{ name: 'main', image: img.fetch, args: [`${serverUrl}/refused`] }] },
      {
        'alpha.wasi.krustlet.dev/allowed-domains': '["https://example.com"]',
      },
    );
    const pod = await finished('fetch-refused');
    expect(pod.status?.phase).toBe('Failed');
    expect(logs('fetch-refused')).toContain('error Wasi error 7');
    expect(served).not.toContain('/refused');
  });
});

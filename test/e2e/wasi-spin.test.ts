/**
 * Spin applications as SpinKube runs them, end to end: an app packaged the way `spin registry
 * push` packages it (test/harness/spin-app.ts: an OCI image config, one Wasm layer per distinct
 * component source, a data layer per static file, the locked app as a layer) in the test's real
 * registry; a RuntimeClass `wasmtime-spin-v2` with handler `spin` (what SpinKube installs); and a
 * Deployment of the shape spin-operator makes of a SpinApp (runtimeClassName, image, the app's
 * variables as `SPIN_VARIABLE_<NAME>` env, `SPIN_HTTP_LISTEN_ADDR=0.0.0.0:80`, containerPort 80
 * named http-app, replicas). The node serves the app's HTTP triggers by route, with Spin's
 * headers; a variable reaches a component through fermyon:spin/variables; a component reads the
 * app's static files; one counts in the key-value store (fermyon:spin/key-value); one makes an
 * outbound request inside its allowed_outbound_hosts (others fail with HttpRequestDenied). An app
 * missing a required variable waits in CreateContainerError; an app in Spin's archive form with
 * the locked app as its config (older Spin) runs too. Requests go from inside the node's network
 * namespace to the pod IPs the apiserver reports.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { pushSpinApp } from '../harness/spin-app.ts';
import { until } from '../harness/until.ts';
import { netnsUnavailable, type TestHost } from '../harness/test-network.ts';
import { WASM_TOLERATION } from './support/images.ts';
import { adminClients, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { startIsolatedNodelet, type NodeletProcess } from './support/nodelet-process.ts';

const unavailable = netnsUnavailable();
/** A file over Spin's inline limit (128 bytes): pushed as a data layer. */
const BIG_FILE = `static content served from a data layer\n${'x'.repeat(200)}\n`;

describe.skipIf(unavailable !== undefined)(`Spin applications on the spin handler (skipped where the machine ${unavailable ?? 'lacks CAP_NET_ADMIN'})`, () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const node = 'spin-n1';
  const runtimeClass = `wasmtime-spin-v2-${process.pid}`;
  let reg: TestRegistry;
  let ns: string;
  let nodelet: NodeletProcess & { host: TestHost };
  let ips: string[] = [];
  let registryPort: number;
  /** An app with a required variable (no default). */
  let requiredImage: string;
  /** An app in Spin's archive form, its locked app as the config (older Spin). */
  let archiveImage: string;

  const get = (ip: string, path: string) => nodelet.host.httpGet(ip, 80, path);
  const isReady = (p: V1Pod) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

  beforeAll(async () => {
    reg = await startRegistry();
    registryPort = Number(new URL(reg.url).port);
    const { image } = await pushSpinApp(reg.host, 'spin-e2e', {
      name: 'spin-e2e',
      variables: { greeting: { default: 'hello from the default' }, unused: { default: 'x' } },
      components: [
        { id: 'hello', crate: 'spin-app', route: '/hello/...' },
        { id: 'config', crate: 'spin-app', route: '/config', config: { greeting: '{{ greeting }}' } },
        { id: 'fetch', crate: 'spin-app', route: '/fetch', allowedOutboundHosts: [`http://127.0.0.1:${registryPort}`] },
        { id: 'fetch-none', crate: 'spin-app', route: '/fetch/...' },
        { id: 'kv', crate: 'spin-app', route: '/kv', keyValueStores: ['default'] },
        { id: 'nokv', crate: 'spin-app', route: '/nokv' },
        {
          id: 'files',
          crate: 'spin-files',
          route: '/static/...',
          config: { greeting: 'files: {{ greeting }}' },
          keyValueStores: ['default'],
          files: { 'static/big.txt': BIG_FILE, 'static/small.txt': 'small inline file' },
        },
      ],
    });
    requiredImage = (
      await pushSpinApp(reg.host, 'spin-required', {
        name: 'spin-required',
        variables: { api_token: {} },
        components: [{ id: 'config', crate: 'spin-app', route: '/config', config: { greeting: '{{ api_token }}' } }],
      })
    ).image;
    archiveImage = (
      await pushSpinApp(
        reg.host,
        'spin-archive',
        {
          name: 'spin-archive',
          components: [{ id: 'files', crate: 'spin-files', route: '/...', files: { 'static/big.txt': BIG_FILE, 'static/deep/x.txt': `${BIG_FILE}deep` } }],
        },
        { archive: true, layout: 'config' },
      )
    ).image;
    nodelet = await startIsolatedNodelet(info, node, { forward: [registryPort] });
    ns = await podNamespace(k.core, 'wasi-spin');
    await waitNodeReady(k.core, node);
    // As SpinKube's RuntimeClass, with the scheduling a nodelet node needs (its taint, and this test's node),
    // which the apiserver's RuntimeClass admission adds to the pods: spin-operator's pods carry neither.
    await k.node.createRuntimeClass({
      body: {
        apiVersion: 'node.k8s.io/v1',
        kind: 'RuntimeClass',
        metadata: { name: runtimeClass },
        handler: 'spin',
        scheduling: { nodeSelector: { 'kubernetes.io/hostname': node }, tolerations: [WASM_TOLERATION] },
      },
    });
    // The Deployment spin-operator makes of a SpinApp (internal/controller/deployment.go: ConstructEnvForApp, containerPort 80 "http-app").
    await k.apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: 'spin-e2e', labels: { 'core.spinkube.dev/app-name': 'spin-e2e' } },
        spec: {
          replicas: 2,
          selector: { matchLabels: { 'core.spinkube.dev/app.spin-e2e.status': 'ready' } },
          template: {
            metadata: { labels: { 'core.spinkube.dev/app.spin-e2e.status': 'ready', 'core.spinkube.dev/app-name': 'spin-e2e' } },
            spec: {
              runtimeClassName: runtimeClass,
              containers: [
                {
                  name: 'spin-e2e',
                  image,
                  ports: [{ name: 'http-app', containerPort: 80 }],
                  env: [
                    { name: 'SPIN_VARIABLE_GREETING', value: 'hello from the Deployment' },
                    { name: 'SPIN_HTTP_LISTEN_ADDR', value: '0.0.0.0:80' },
                  ],
                  readinessProbe: { httpGet: { path: '/.well-known/spin/health', port: 80 }, periodSeconds: 1 },
                },
              ],
            },
          },
        },
      },
    });
    await until(
      'both replicas Ready',
      async () => {
        const pods = (await k.core.listNamespacedPod({ namespace: ns })).items;
        const ready = pods.filter(isReady);
        ips = ready.map((p) => p.status!.podIP!).filter(Boolean);
        return ready.length === 2 && ips.length === 2;
      },
      180_000,
    );
  }, 600_000);

  afterAll(async () => {
    await k.node.deleteRuntimeClass({ name: runtimeClass }).catch(() => undefined);
    await nodelet?.dispose();
    await reg?.stop();
  });

  it('serves the HTTP triggers by route on every replica, with the headers Spin sets', async () => {
    expect(new Set(ips).size).toBe(2);
    for (const ip of ips) {
      const r = await get(ip, '/hello/a/b?x=1');
      expect(r.status).toBe(200);
      const lines = r.body.split('\n');
      expect(lines[0]).toBe('hello from spin');
      const h = Object.fromEntries(
        lines
          .slice(1)
          .filter(Boolean)
          .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]),
      );
      expect(h['spin-full-url']).toMatch(/^http:\/\/[^/]+\/hello\/a\/b\?x=1$/);
      expect(h['spin-path-info']).toBe('/a/b');
      expect(h['spin-matched-route']).toBe('/hello/...');
      expect(h['spin-raw-component-route']).toBe('/hello/...');
      expect(h['spin-component-route']).toBe('/hello');
      expect(h['spin-base-path']).toBe('/');
      expect(h['spin-client-addr']).toMatch(/:\d+$/);
      // The wildcard route also takes its bare prefix, with an empty path-info.
      expect((await get(ip, '/hello')).body).toContain('spin-path-info: \n');
      // No route: 404, as Spin answers.
      expect((await get(ip, '/nowhere')).status).toBe(404);
    }
  });

  it("gives a component its variable from the Deployment's env (fermyon:spin/variables)", async () => {
    const r = await get(ips[0]!, '/config');
    expect(r).toEqual({ status: 200, body: 'greeting=hello from the Deployment' });
  });

  it("mounts the app's static files read-only at the component's /: a data layer and an inlined file", async () => {
    expect(await get(ips[0]!, '/static/big.txt')).toEqual({ status: 200, body: BIG_FILE });
    expect(await get(ips[1]!, '/static/small.txt')).toEqual({ status: 200, body: 'small inline file' });
    expect((await get(ips[0]!, '/static/missing.txt')).status).toBe(404);
  });

  it("counts in the app's default store through fermyon:spin/key-value; a component without the store in key_value_stores is refused", async () => {
    const first = await get(ips[0]!, '/kv');
    expect(first).toEqual({ status: 200, body: 'count=1 keys=count exists=true' });
    expect((await get(ips[0]!, '/kv')).body).toBe('count=2 keys=count exists=true');
    // The default store is the pod's (SQLite under its directory): the other replica counts on its own.
    expect((await get(ips[1]!, '/kv')).body).toBe('count=1 keys=count exists=true');
    const denied = await get(ips[0]!, '/nokv');
    expect(denied.status).toBe(500);
    expect(denied.body).toMatch(/^key-value error: .*AccessDenied/);
  });

  it('makes an outbound request to a host its allowed_outbound_hosts lists; any other fails as in Spin (HTTP-request-denied)', async () => {
    const r = await get(ips[0]!, `/fetch?url=http://127.0.0.1:${registryPort}/v2/`);
    expect(r.status, r.body).toBe(200);
    expect(r.body).toMatch(/^fetched 200/);
    // The same registry by another name (and the same address on another port) is not in the list.
    for (const url of [`http://localhost:${registryPort}/v2/`, `http://127.0.0.1:${registryPort + 1}/v2/`]) {
      const denied = await get(ips[0]!, `/fetch?url=${url}`);
      expect(denied.status, denied.body).toBe(502);
      expect(denied.body).toMatch(/^send failed: .*HttpRequestDenied/);
    }
    // A component listing no host may reach none (its route /fetch/... gives the fixture the same spin-component-route).
    const none = await get(ips[0]!, `/fetch/none?url=http://127.0.0.1:${registryPort}/v2/`);
    expect(none.status, none.body).toBe(502);
    expect(none.body).toMatch(/^send failed: .*HttpRequestDenied/);
  });

  it('refuses to start an app whose required variable has no value, naming the env to set', async () => {
    await k.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'required' },
        spec: { runtimeClassName: runtimeClass, nodeName: node, tolerations: [WASM_TOLERATION], containers: [{ name: 'app', image: requiredImage }] },
      },
    });
    const p = await podUntil(
      k.core,
      ns,
      'required',
      'CreateContainerError',
      (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerError',
      120_000,
    );
    expect(p.status!.containerStatuses![0]!.state!.waiting!.message).toMatch(/required variables api_token have no value: set SPIN_VARIABLE_API_TOKEN/);
  });

  it("serves an app in Spin's archive form whose locked app is the manifest's config (older Spin), on the containerPort without SPIN_HTTP_LISTEN_ADDR", async () => {
    await k.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'archive' },
        spec: {
          runtimeClassName: runtimeClass,
          nodeName: node,
          tolerations: [WASM_TOLERATION],
          containers: [{ name: 'app', image: archiveImage, ports: [{ containerPort: 8080 }] }],
        },
      },
    });
    const p = await podUntil(k.core, ns, 'archive', 'Ready', isReady, 120_000);
    const ip = p.status!.podIP!;
    expect(await nodelet.host.httpGet(ip, 8080, '/big.txt')).toEqual({ status: 200, body: BIG_FILE });
    expect(await nodelet.host.httpGet(ip, 8080, '/deep/x.txt')).toEqual({ status: 200, body: `${BIG_FILE}deep` });
  });

  // Last: it adds a key to the replicas' default store, which the key-value case lists.
  it('gives a component served through jco its variable and key-value store too', async () => {
    expect(await get(ips[1]!, '/static/_var')).toEqual({ status: 200, body: 'greeting=files: hello from the Deployment' });
    expect(await get(ips[1]!, '/static/_kv')).toEqual({ status: 200, body: 'count=1' });
    expect(await get(ips[1]!, '/static/_kv')).toEqual({ status: 200, body: 'count=2' });
  });
});

/**
 * Routes between nodes' pod CIDRs (`--pod-routes=host-gw`, docs/pod-routes.md), on a network that
 * does not cheat: two nodelets, each in a network namespace of its own with its own InternalIP on
 * a test LAN, so a pod IP of node 2 is no local address of node 1 and node 1 reaches it only
 * through a route via node 2's InternalIP.
 *
 *   root namespace: control plane + registry on 127.0.0.1, LAN bridge 198.18.<n>.1/24
 *        │ veth                                   │ veth
 *   netns n1: eth0 198.18.<n>.11                netns n2: eth0 198.18.<n>.12
 *             nodelet0-like bridge: 10.x.a.0/24           bridge: 10.x.b.0/24 (kube-controller-manager's CIDRs)
 *             pod web-1 on 10.x.a.2:8080                   pod web-2 on 10.x.b.2:8080
 *
 * The control plane stays where every e2e test has it, on 127.0.0.1 of the root namespace: each
 * namespace's harness agent listens on the namespace's 127.0.0.1:<apiserver port> (and the
 * registry's) and relays over a Unix socket (test/harness/test-network.ts). That keeps the
 * kubeconfigs, the apiserver's serving certificate and the image references as for any test node;
 * giving the control plane a LAN address would need a second certificate and a listener of the
 * root namespace on the LAN. Pod CIDRs come from kube-controller-manager (`--allocate-node-cidrs`)
 * and exist only inside the two namespaces: the test's client is node 1's namespace itself (a
 * connection from pod web-1's IP, made by the harness agent there), never the root namespace.
 *
 * The condition strings are upstream's route controller's (k8s.io/cloud-provider
 * controllers/route/route_controller.go, updateNetworkingCondition).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { createTestNetwork, netnsUnavailable, type TestHost, type TestNetwork } from '../harness/test-network.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, condition, eventually, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { kubectl } from './support/kubectl.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

const unavailable = netnsUnavailable();
/** What an operator applies once per cluster for host-gw: the nodes may list and watch Nodes. */
const RBAC = resolve(import.meta.dirname, '..', '..', 'deploy', 'rbac', 'pod-routes.yaml');

describe.skipIf(unavailable !== undefined)(`pod routes between nodes on a test LAN (skipped where the machine ${unavailable ?? 'lacks CAP_NET_ADMIN'})`, () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const names = ['podroutes-n1', 'podroutes-n2'] as const;
  let reg: TestRegistry;
  let net: TestNetwork;
  let hosts: TestHost[] = [];
  let nodes: NodeletProcess[] = [];
  let ns: string;
  let cidrs: string[] = [];
  /** The pod IPs of web-1 (node 1) and web-2 (node 2). */
  let ips: string[] = [];
  let image: string;

  /** nodelet's routes (protocol 213) in a host's main table: destination → gateway. */
  const routesOf = (h: TestHost): Record<string, string> =>
    Object.fromEntries(
      (JSON.parse(h.ip('-j', 'route', 'show', 'proto', '213').trim() || '[]') as { dst: string; gateway: string }[]).map((r) => [r.dst, r.gateway]),
    );
  /** GET / of pod `to` on port 8080 from inside host `from`, from the pod IP `fromIP`: the body, or the connection error's code. */
  const fetchPod = (from: TestHost, to: string, fromIP: string) =>
    from.httpGet(to, 8080, '/', fromIP).then(
      (r) => `${r.status} ${r.body.trim()}`,
      (e: NodeJS.ErrnoException) => e.code ?? String(e),
    );
  const networkCondition = async (name: string) => condition(await k.core.readNode({ name }), 'NetworkUnavailable');

  beforeAll(async () => {
    reg = await startRegistry();
    image = await pushModule(reg, 'http-server');
    net = createTestNetwork();
    hosts = [await net.addHost('n1', { lan: true }), await net.addHost('n2', { lan: true })];
    const registryPort = Number(reg.host.split(':')[1]);
    for (const h of hosts) await h.forwardOut(registryPort);
    // A route of nodelet's protocol left from an earlier run, to a node that is gone: host-gw deletes it at start.
    hosts[0]!.ip('route', 'add', '10.250.7.0/24', 'via', `${net.lanPrefix}.99`, 'proto', '213');
    nodes = await Promise.all(names.map((name, i) => startNodelet(info, name, [`--node-ip=${hosts[i]!.lanIP}`], 'issued', {}, { host: hosts[i] })));
    ns = await podNamespace(k.core, 'podroutes');
    for (const name of names) await waitNodeReady(k.core, name);
    cidrs = await Promise.all(names.map((name) => eventually(`${name} pod CIDR`, async () => (await k.core.readNode({ name })).spec?.podCIDR)));
    for (const [i, name] of names.entries()) {
      const spec = {
        nodeName: name,
        tolerations: [WASM_TOLERATION],
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'web', image, ports: [{ containerPort: 8080 }] }],
      } as V1PodSpec;
      await k.core.createNamespacedPod({ namespace: ns, body: { metadata: { name: `web-${i + 1}` }, spec } });
    }
    ips = await Promise.all(
      [1, 2].map(
        async (n) => (await podUntil(k.core, ns, `web-${n}`, 'Running with an IP', (p) => p.status?.phase === 'Running' && !!p.status.podIP)).status!.podIP!,
      ),
    );
  }, 600_000);
  afterAll(async () => {
    kubectl(info, ['delete', '--ignore-not-found', '-f', RBAC]);
    for (const n of nodes) await n.dispose();
    await net?.dispose();
    await reg?.stop();
  });

  it("without --pod-routes: node 1 has no route to node 2's pod CIDR, a pod IP there is unreachable, and no NetworkUnavailable is reported", async () => {
    expect(cidrs[0]).not.toBe(cidrs[1]);
    expect(hosts[0]!.lanIP).not.toBe(hosts[1]!.lanIP);
    // Each pod is reachable on its own node (the server works; the address is local there).
    expect(await fetchPod(hosts[0]!, ips[0]!, ips[0]!)).toMatch(/^200 hello from wasm \d+$/);
    expect(await fetchPod(hosts[1]!, ips[1]!, ips[1]!)).toMatch(/^200 hello from wasm \d+$/);
    expect(routesOf(hosts[0]!)).toEqual({ '10.250.7.0/24': `${net.lanPrefix}.99` });
    expect(routesOf(hosts[1]!)).toEqual({});
    expect(await fetchPod(hosts[0]!, ips[1]!, ips[0]!)).toBe('ENETUNREACH');
    expect(await fetchPod(hosts[1]!, ips[0]!, ips[1]!)).toBe('ENETUNREACH');
    for (const name of names) expect(await networkCondition(name)).toBeUndefined();
  });

  it('with --pod-routes=host-gw: each node routes the other pod CIDR via its InternalIP (the stale route gone), pods reach each other by pod IP, NetworkUnavailable=False/RouteCreated', async () => {
    const restarts = await Promise.all(
      [1, 2].map(async (n) => (await k.core.readNamespacedPod({ name: `web-${n}`, namespace: ns })).status!.containerStatuses![0]!.restartCount),
    );
    for (const n of nodes) await n.restart(['--pod-routes=host-gw']);
    // A node may read only its own Node (the Node authorizer) until the cluster grants more: nodelet says what to apply.
    await eventually('the forbidden Node list explained in the log', () =>
      readFileSync(nodes[0]!.logFile, 'utf8').includes('this node may not list and watch Nodes; grant it (kubectl apply -f deploy/rbac/pod-routes.yaml)'),
    );
    expect(routesOf(hosts[1]!)).toEqual({});
    expect(kubectl(info, ['apply', '-f', RBAC]).status).toBe(0);
    await eventually('both nodes routing the other pod CIDR', () => {
      const [r1, r2] = hosts.map(routesOf);
      return JSON.stringify(r1) === JSON.stringify({ [cidrs[1]!]: hosts[1]!.lanIP }) && JSON.stringify(r2) === JSON.stringify({ [cidrs[0]!]: hosts[0]!.lanIP });
    });
    // The kernel's choice for pod 1 → pod 2: over the LAN, via node 2.
    expect(hosts[0]!.ip('route', 'get', ips[1]!, 'from', ips[0]!)).toContain(`via ${hosts[1]!.lanIP} dev eth0`);
    // The containers died with the nodelets (in-process runtime); the restarted ones serve on the same pod IPs.
    for (const n of [1, 2])
      await podUntil(k.core, ns, `web-${n}`, 'running again', (p) => {
        const c = p.status?.containerStatuses?.[0];
        return !!c?.state?.running && c.restartCount > restarts[n - 1]! && p.status?.podIP === ips[n - 1];
      });
    const answer = await eventually('pod 2 answering pod 1', async () => {
      const got = await fetchPod(hosts[0]!, ips[1]!, ips[0]!);
      return got.startsWith('200') ? got : undefined;
    });
    expect(answer).toMatch(/^200 hello from wasm \d+$/);
    expect(await fetchPod(hosts[1]!, ips[0]!, ips[1]!)).toMatch(/^200 hello from wasm \d+$/);
    for (const name of names) {
      const c = await eventually(`${name} NetworkUnavailable`, () => networkCondition(name));
      expect(c).toMatchObject({ status: 'False', reason: 'RouteCreated', message: 'RouteController created a route' });
    }
  });

  it("a deleted Node takes its route with it: node 1 no longer routes node 2's pod CIDR, and its pod IP is unreachable again", async () => {
    await nodes[1]!.stop();
    await k.core.deleteNode({ name: names[1] });
    await eventually('the route to the deleted node gone', () => Object.keys(routesOf(hosts[0]!)).length === 0);
    expect(await fetchPod(hosts[0]!, ips[1]!, ips[0]!)).toBe('ENETUNREACH');
    // Node 1 has every route it should have (none): still RouteCreated.
    expect(await networkCondition(names[0])).toMatchObject({ status: 'False', reason: 'RouteCreated' });
  });
});

/**
 * Pod networking end to end: the real kube-controller-manager gives the node a
 * pod CIDR (`--allocate-node-cidrs`), nodelet gives each pod an address from it
 * on its own bridge, and the real EndpointSlice controller lists the pods
 * behind a Service. (nodelet runs no kube-proxy: no ClusterIP traffic here.)
 *
 * nodelet runs in a network namespace of the test's own (test/harness/test-network.ts),
 * so its bridge and the pod IPs exist only there, and the test's traffic to a pod IP
 * is made from inside that namespace, never from the machine's root namespace.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import * as k8s from '@kubernetes/client-node';
import ipaddr from 'ipaddr.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { nodeBinary } from '../harness/node-binary.ts';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { createTestNetwork, netnsUnavailable, type TestHost, type TestNetwork } from '../harness/test-network.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { kubectl } from './support/kubectl.ts';
import { podInterfaceFor, startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

const unavailable = netnsUnavailable();

describe.skipIf(unavailable !== undefined)(`pod IPs and Services (skipped where the machine ${unavailable ?? 'lacks CAP_NET_ADMIN'})`, () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const discovery = k.kc.makeApiClient(k8s.DiscoveryV1Api);
  const nodeName = 'podnet-n1';
  const iface = podInterfaceFor(nodeName);
  const app = 'sleepers';
  let nodelet: NodeletProcess;
  let net: TestNetwork;
  let host: TestHost;
  let reg: TestRegistry;
  let ns: string;
  let podCIDR: string;
  const img: Record<string, string> = {};

  beforeAll(async () => {
    reg = await startRegistry();
    for (const m of ['sleep', 'hello']) img[m] = await pushModule(reg, m);
    net = createTestNetwork();
    host = await net.addHost('n1');
    await host.forwardOut(Number(reg.host.split(':')[1]));
    nodelet = await startNodelet(info, nodeName, [], 'issued', {}, { host });
    ns = await podNamespace(k.core, 'podnet');
    await waitNodeReady(k.core, nodeName);
    podCIDR = await eventually('the node pod CIDR', async () => (await k.core.readNode({ name: nodeName })).spec?.podCIDR);
  });
  afterAll(async () => {
    await nodelet?.dispose();
    await net?.dispose();
    await reg?.stop();
  });

  const placement = { tolerations: [WASM_TOLERATION], nodeSelector: { 'kubernetes.io/hostname': nodeName } };
  const inCidr = (ip: string) => {
    const [net, bits] = ipaddr.parseCIDR(podCIDR);
    return ipaddr.parse(ip).match(net, bits);
  };
  /** The /32 addresses on the node's pod interface (in the node's namespace). */
  const onInterface = (): string[] => {
    const links = JSON.parse(host.ip('-j', 'addr', 'show', 'dev', iface)) as {
      addr_info: { local: string; prefixlen: number }[];
    }[];
    return links.flatMap((l) => l.addr_info.filter((a) => a.prefixlen === 32).map((a) => a.local));
  };
  const allocations = () => readdirSync(join(nodelet.rootDir, 'network', 'allocations')).sort();
  const appPods = async () =>
    (await k.core.listNamespacedPod({ namespace: ns, labelSelector: `app=${app}` })).items.filter((p) => !p.metadata?.deletionTimestamp);
  const running = (pods: V1Pod[], n: number) => pods.length === n && pods.every((p) => p.status?.phase === 'Running' && p.status.podIP);
  const readyEndpoints = async () => {
    const slices = await discovery.listNamespacedEndpointSlice({ namespace: ns, labelSelector: `kubernetes.io/service-name=${app}` });
    return slices.items
      .flatMap((s) => s.endpoints ?? [])
      .filter((e) => e.conditions?.ready === true)
      .flatMap((e) => e.addresses)
      .sort();
  };
  const sortedIPs = (pods: V1Pod[]) => pods.map((p) => p.status!.podIP!).sort();
  let ips: string[] = [];

  it('a Deployment of 3 Wasm pods gets 3 distinct IPs from the node pod CIDR, held on the pod interface', async () => {
    expect(podCIDR).toMatch(/^10\.\d+\.\d+\.0\/24$/);
    await k.apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: app },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app } },
          template: {
            metadata: { labels: { app } },
            spec: { ...placement, terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: img.sleep, ports: [{ containerPort: 8080 }] }] },
          },
        },
      },
    });
    const pods = await eventually('3 Running pods with IPs', async () => {
      const p = await appPods();
      return running(p, 3) ? p : undefined;
    });
    ips = sortedIPs(pods);
    expect(new Set(ips).size).toBe(3);
    for (const ip of ips) expect(inCidr(ip), `${ip} in ${podCIDR}`).toBe(true);
    for (const p of pods) expect(p.status!.podIPs).toEqual([{ ip: p.status!.podIP }]);
    expect(onInterface()).toEqual(expect.arrayContaining(ips));
    expect(allocations()).toEqual(pods.map((p) => `${p.metadata!.uid}.json`).sort());
  });

  it('a Service selecting them gets an EndpointSlice with 3 ready endpoints (the real controller-manager)', async () => {
    await k.core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name: app }, spec: { selector: { app }, ports: [{ port: 80, targetPort: 8080 }] } },
    });
    const eps = await eventually('3 ready endpoints', async () => {
      const e = await readyEndpoints();
      return e.length === 3 ? e : undefined;
    });
    expect(eps).toEqual(ips);
  });

  it('a server bound on a pod IP is reachable from the node (a process in its network namespace)', async () => {
    const script = `require('net').createServer((c) => c.end('hello from the pod IP')).listen(0, ${JSON.stringify(ips[0])}, function () { console.log(this.address().port); })`;
    const server = spawn(host.enter[0]!, [...host.enter.slice(1), nodeBinary(), '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const port = Number(await new Promise<string>((ok) => server.stdout!.once('data', (d) => ok(String(d).trim()))));
      const sock = await host.dial({ host: ips[0]!, port });
      const got = await new Promise<string>((ok, fail) => {
        let text = '';
        sock
          .on('data', (d) => (text += String(d)))
          .on('end', () => ok(text))
          .on('error', fail);
        sock.resume();
      });
      expect(got).toBe('hello from the pod IP');
    } finally {
      server.kill();
    }
  });

  it('deleting a pod removes its endpoint and frees its IP, which a later pod re-uses', async () => {
    const victim = (await appPods()).find((p) => p.status?.podIP === ips[0])!;
    const freed = victim.status!.podIP!;
    await k.core.deleteNamespacedPod({ name: victim.metadata!.name!, namespace: ns });
    await eventually(
      'the deleted pod gone',
      async () => !(await k.core.listNamespacedPod({ namespace: ns })).items.some((p) => p.metadata!.uid === victim.metadata!.uid),
    );
    expect(allocations()).not.toContain(`${victim.metadata!.uid}.json`);
    await eventually('the replacement Running', async () => running(await appPods(), 3));
    const now = sortedIPs(await appPods());
    // The replacement may have been set up before the old pod's IP was freed: then it got the next one.
    if (!now.includes(freed)) expect(onInterface()).not.toContain(freed);
    await eventually('3 ready endpoints, the deleted pod not among them unless its IP was re-used', async () => {
      const e = await readyEndpoints();
      return JSON.stringify(e) === JSON.stringify(now);
    });
    // Lowest free first: with a fourth replica, the four pods hold exactly the first four pod addresses.
    expect(kubectl(info, ['scale', '-n', ns, `deployment/${app}`, '--replicas=4']).status).toBe(0);
    const four = await eventually('4 Running pods', async () => {
      const p = await appPods();
      return running(p, 4) ? p : undefined;
    });
    const base = podCIDR.split('/')[0]!.split('.').slice(0, 3).join('.');
    expect(sortedIPs(four)).toEqual([2, 3, 4, 5].map((n) => `${base}.${n}`).sort());
    expect(sortedIPs(four)).toContain(freed);
    ips = sortedIPs(four);
  });

  it('a restarted nodelet keeps every pod IP', async () => {
    const pods = await appPods();
    const before = new Map(pods.map((p) => [p.metadata!.uid!, p.status!.podIP!]));
    const restarts = new Map(pods.map((p) => [p.metadata!.uid!, p.status!.containerStatuses![0]!.restartCount]));
    const files = allocations();
    await nodelet.restart();
    await waitNodeReady(k.core, nodeName);
    // The containers died with the old process; once each runs again, its status (and IP) was posted by the new one.
    await eventually('the pods running again under the restarted nodelet', async () => {
      const now = await appPods();
      return (
        running(now, 4) &&
        now.every(
          (p) => (p.status!.containerStatuses![0]!.restartCount ?? 0) > restarts.get(p.metadata!.uid!)! && p.status?.containerStatuses?.[0]?.state?.running,
        )
      );
    });
    expect(allocations()).toEqual(files);
    const after = new Map((await appPods()).map((p) => [p.metadata!.uid!, p.status!.podIP!]));
    expect(after).toEqual(before);
    expect(onInterface()).toEqual(expect.arrayContaining(ips));
  });

  it('a hostNetwork pod gets the host IP (and takes no pod IP)', async () => {
    const spec = { ...placement, hostNetwork: true, restartPolicy: 'Never', containers: [{ name: 'main', image: img.hello }] } as V1PodSpec;
    await k.core.createNamespacedPod({ namespace: ns, body: { metadata: { name: 'host-net' }, spec } });
    const p = await podUntil(k.core, ns, 'host-net', 'Succeeded', (x) => x.status?.phase === 'Succeeded');
    expect(p.status?.podIP).toBe('127.0.0.1');
    expect(p.status?.podIPs).toEqual([{ ip: '127.0.0.1' }]);
    expect(allocations()).not.toContain(`${p.metadata!.uid}.json`);
  });

  it('Downward API status.podIP and status.podIPs in env resolve to the pod IP; a finished pod frees it', async () => {
    const env = [
      { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
      { name: 'POD_IPS', valueFrom: { fieldRef: { fieldPath: 'status.podIPs' } } },
    ];
    const spec = { ...placement, restartPolicy: 'Never', containers: [{ name: 'main', image: img.hello, env }] } as V1PodSpec;
    await k.core.createNamespacedPod({ namespace: ns, body: { metadata: { name: 'downward' }, spec } });
    const p = await podUntil(k.core, ns, 'downward', 'Succeeded', (x) => x.status?.phase === 'Succeeded');
    const ip = p.status!.podIP!;
    expect(inCidr(ip)).toBe(true);
    expect(ips).not.toContain(ip);
    const logs = kubectl(info, ['logs', '-n', ns, 'downward']).stdout;
    expect(logs).toContain(`env POD_IP=${ip}\n`);
    expect(logs).toContain(`env POD_IPS=${ip}\n`);
    await eventually('the finished pod IP freed', () => !allocations().includes(`${p.metadata!.uid}.json`) && !onInterface().includes(ip));
  });
});

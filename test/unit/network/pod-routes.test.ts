/** core/network/pod-routes.ts with a fake Node source, routing table and interfaces. */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Node } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { enableForwarding } from '../../../core/network/forwarding.ts';
import type { PodRoute, RouteTable } from '../../../core/network/host-routes.ts';
import type { NodeSource } from '../../../core/network/node-watch.ts';
import { PodRoutes } from '../../../core/network/pod-routes.ts';
import type { LocalPrefix } from '../../../core/network/route-plan.ts';
import { memoryLogger } from '../pods/fakes.ts';

const node = (name: string, cidrs: string[], ips: string[]): V1Node => ({
  metadata: { name },
  spec: cidrs.length ? { podCIDR: cidrs[0], podCIDRs: cidrs } : {},
  status: { addresses: ips.map((address) => ({ type: 'InternalIP', address })) },
});

/** Nodes the test changes; `changed` as the informer calls it. */
class FakeNodes implements NodeSource {
  private nodes = new Map<string, V1Node>();
  private changed?: () => void;
  listed = false;
  stopped = false;
  start(changed: () => void) {
    this.changed = changed;
  }
  synced = () => this.listed;
  list = () => [...this.nodes.values()];
  stop() {
    this.stopped = true;
  }
  /** The first list. */
  sync(...nodes: V1Node[]) {
    for (const n of nodes) this.nodes.set(n.metadata!.name!, n);
    this.listed = true;
    this.changed?.();
  }
  put(n: V1Node) {
    this.nodes.set(n.metadata!.name!, n);
    this.changed?.();
  }
  delete(name: string) {
    this.nodes.delete(name);
    this.changed?.();
  }
}

/** A routing table: nodelet's routes, and CIDRs someone else routes. */
class FakeTable implements RouteTable {
  readonly ours = new Map<string, string>();
  readonly theirs = new Set<string>();
  readonly calls: string[] = [];
  failAdd = new Map<string, string>();
  failList = false;
  async list(): Promise<PodRoute[]> {
    this.calls.push('list');
    if (this.failList) throw new Error('ip: not found');
    return [...this.ours].map(([dst, via]) => ({ dst, via }));
  }
  async add({ dst, via }: PodRoute) {
    this.calls.push(`add ${dst} ${via}`);
    const err = this.failAdd.get(dst);
    if (err) throw new Error(err);
    if (this.theirs.has(dst) || this.ours.has(dst)) return 'exists' as const;
    this.ours.set(dst, via);
    return 'added' as const;
  }
  async replace({ dst, via }: PodRoute) {
    this.calls.push(`replace ${dst} ${via}`);
    this.ours.set(dst, via);
  }
  async remove(dst: string) {
    this.calls.push(`del ${dst}`);
    this.ours.delete(dst);
  }
}

const LAN: LocalPrefix[] = [
  { address: '192.0.2.10', prefix: 24 },
  { address: 'fd00:5::10', prefix: 64 },
];

function setup(local: LocalPrefix[] = LAN) {
  const nodes = new FakeNodes();
  const table = new FakeTable();
  const lines: string[] = [];
  const events: string[] = [];
  const forwarding: number[] = [];
  let changes = 0;
  const routes = new PodRoutes({
    nodeName: 'me',
    podInterface: 'nodelet0',
    nodes,
    log: memoryLogger(lines),
    nodeEvent: (type, reason, note) => events.push(`${type} ${reason} ${note}`),
    routes: table,
    localPrefixes: () => local,
    enableForwarding: async (f) => {
      forwarding.push(f);
      return true;
    },
    resyncMs: 3_600_000,
  });
  routes.onChange(() => changes++);
  routes.start();
  /** Waits for the reconcile a change asked for. */
  const settled = () => routes.reconcile();
  return { nodes, table, lines, events, forwarding, routes, settled, changes: () => changes };
}

const ME = node('me', ['10.244.1.0/24', 'fd10:244:1::/64'], ['192.0.2.10', 'fd00:5::10']);

describe('PodRoutes', () => {
  it('reports nothing before the first list of Nodes; then routes every other node on the LAN and reports RouteCreated', async () => {
    const t = setup();
    expect(t.routes.conditions()).toEqual([]);
    t.nodes.sync(ME, node('b', ['10.244.2.0/24', 'fd10:244:2::/64'], ['192.0.2.11', 'fd00:5::11']), node('far', ['10.244.3.0/24'], ['198.51.100.3']));
    await t.settled();
    expect([...t.table.ours]).toEqual([
      ['10.244.2.0/24', '192.0.2.11'],
      ['fd10:244:2::/64', 'fd00:5::11'],
    ]);
    expect(t.routes.conditions()).toEqual([
      { type: 'NetworkUnavailable', status: 'False', reason: 'RouteCreated', message: 'RouteController created a route' },
    ]);
    expect(t.changes()).toBe(1);
    // Forwarding for both families of this node's pod CIDRs, once.
    expect(t.forwarding).toEqual([4, 6]);
    expect(t.lines.some((l) => l.includes('no route to a node pod CIDR') && l.includes('198.51.100.3 is on no subnet'))).toBe(true);
    await t.routes.stop();
  });

  it("replaces a route when the node's InternalIP changes, moves it when its CIDR changes, deletes it when the node goes", async () => {
    const t = setup();
    t.nodes.sync(ME, node('b', ['10.244.2.0/24'], ['192.0.2.11']));
    await t.settled();
    t.table.calls.length = 0;
    t.nodes.put(node('b', ['10.244.2.0/24'], ['192.0.2.12']));
    await t.settled();
    t.nodes.put(node('b', ['10.244.9.0/24'], ['192.0.2.12']));
    await t.settled();
    expect([...t.table.ours]).toEqual([['10.244.9.0/24', '192.0.2.12']]);
    // An update that changes nothing routed (a heartbeat) costs no kernel call.
    t.nodes.put(node('b', ['10.244.9.0/24'], ['192.0.2.12']));
    await t.settled();
    t.nodes.delete('b');
    await t.settled();
    expect(t.table.calls).toEqual(['replace 10.244.2.0/24 192.0.2.12', 'del 10.244.2.0/24', 'add 10.244.9.0/24 192.0.2.12', 'del 10.244.9.0/24']);
    expect([...t.table.ours]).toEqual([]);
    // No peer left: the node still has its CIDR and every route it should have.
    expect(t.routes.conditions()[0]).toMatchObject({ status: 'False', reason: 'RouteCreated' });
    await t.routes.stop();
  });

  it("at start, deletes nodelet's stale routes (nodes gone while it was down) and adopts its current ones", async () => {
    const t = setup();
    t.table.ours.set('10.244.7.0/24', '192.0.2.77'); // a node deleted meanwhile
    t.table.ours.set('10.244.2.0/24', '192.0.2.11'); // still right
    t.table.ours.set('10.244.3.0/24', '192.0.2.99'); // its node's IP changed meanwhile
    t.nodes.sync(ME, node('b', ['10.244.2.0/24'], ['192.0.2.11']), node('c', ['10.244.3.0/24'], ['192.0.2.13']));
    await t.settled();
    expect(t.table.calls).toEqual(['list', 'del 10.244.7.0/24', 'replace 10.244.3.0/24 192.0.2.13']);
    expect([...t.table.ours].sort()).toEqual([
      ['10.244.2.0/24', '192.0.2.11'],
      ['10.244.3.0/24', '192.0.2.13'],
    ]);
    await t.routes.stop();
  });

  it("leaves a route someone else installed to a node's CIDR alone (not a failure)", async () => {
    const t = setup();
    t.table.theirs.add('10.244.2.0/24');
    t.nodes.sync(ME, node('b', ['10.244.2.0/24'], ['192.0.2.11']));
    await t.settled();
    t.nodes.put(node('b', ['10.244.2.0/24'], ['192.0.2.11']));
    await t.settled();
    expect([...t.table.ours]).toEqual([]);
    expect(t.routes.conditions()[0]).toMatchObject({ status: 'False', reason: 'RouteCreated' });
    expect(t.lines.filter((l) => l.includes('exists that nodelet did not install'))).toHaveLength(1);
    // Its node goes: nothing of nodelet's to delete.
    t.nodes.delete('b');
    await t.settled();
    expect(t.table.calls.filter((c) => c.startsWith('del'))).toEqual([]);
    await t.routes.stop();
  });

  it('a route the kernel refuses: NetworkUnavailable=True (NoRouteCreated) and one FailedToCreateRoute event, until it is made', async () => {
    const t = setup();
    t.table.failAdd.set('10.244.2.0/24', 'RTNETLINK answers: Network is unreachable');
    t.nodes.sync(ME, node('b', ['10.244.2.0/24'], ['192.0.2.11']), node('c', ['10.244.3.0/24'], ['192.0.2.13']));
    await t.settled();
    expect(t.routes.conditions()).toEqual([
      { type: 'NetworkUnavailable', status: 'True', reason: 'NoRouteCreated', message: 'RouteController failed to create a route' },
    ]);
    expect([...t.table.ours]).toEqual([['10.244.3.0/24', '192.0.2.13']]);
    t.nodes.put(node('c', ['10.244.3.0/24'], ['192.0.2.13'])); // retried on the next change, no second event
    await t.settled();
    expect(t.events).toEqual([
      'Warning FailedToCreateRoute Could not create route 10.244.2.0/24 via 192.0.2.11 for node b: RTNETLINK answers: Network is unreachable',
    ]);
    t.table.failAdd.clear();
    t.nodes.put(node('c', ['10.244.3.0/24'], ['192.0.2.13']));
    await t.settled();
    expect(t.routes.conditions()[0]).toMatchObject({ status: 'False', reason: 'RouteCreated' });
    expect(t.changes()).toBe(2);
    await t.routes.stop();
  });

  it('NoRouteCreated while the node has no pod CIDR, or nodelet cannot list its routes', async () => {
    const t = setup();
    t.nodes.sync(node('me', [], ['192.0.2.10']), node('b', ['10.244.2.0/24'], ['192.0.2.11']));
    await t.settled();
    expect(t.routes.conditions()[0]).toMatchObject({ status: 'True', reason: 'NoRouteCreated' });
    expect([...t.table.ours]).toEqual([['10.244.2.0/24', '192.0.2.11']]);
    expect(t.forwarding).toEqual([]);
    t.nodes.put(ME);
    await t.settled();
    expect(t.routes.conditions()[0]).toMatchObject({ status: 'False', reason: 'RouteCreated' });
    await t.routes.stop();

    const u = setup();
    u.table.failList = true;
    u.nodes.sync(ME, node('b', ['10.244.2.0/24'], ['192.0.2.11']));
    await u.settled();
    expect(u.routes.conditions()[0]).toMatchObject({ status: 'True', reason: 'NoRouteCreated' });
    // Nothing changed in the table while nodelet cannot tell its routes from others'.
    expect(new Set(u.table.calls)).toEqual(new Set(['list']));
    u.table.failList = false;
    u.table.calls.length = 0;
    u.nodes.put(node('b', ['10.244.2.0/24'], ['192.0.2.11']));
    await u.settled();
    expect(u.table.calls).toEqual(['list', 'add 10.244.2.0/24 192.0.2.11']);
    expect(u.routes.conditions()[0]).toMatchObject({ status: 'False' });
    await u.routes.stop();
    expect(u.nodes.stopped).toBe(true);
  });

  it('changes during a reconcile coalesce into one more', async () => {
    const t = setup();
    t.nodes.sync(ME);
    const first = t.routes.reconcile();
    t.nodes.put(node('b', ['10.244.2.0/24'], ['192.0.2.11']));
    t.nodes.put(node('c', ['10.244.3.0/24'], ['192.0.2.13']));
    await first;
    expect(t.table.calls.filter((c) => c === 'list')).toHaveLength(1);
    expect([...t.table.ours.keys()].sort()).toEqual(['10.244.2.0/24', '10.244.3.0/24']);
    await t.routes.stop();
  });
});

describe('enableForwarding', () => {
  const root = mkdtempSync(join(tmpdir(), 'nodelet-procsys-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('writes 1 where forwarding is off, leaves it where it is on, and says why it cannot', async () => {
    mkdirSync(join(root, 'net', 'ipv4'), { recursive: true });
    writeFileSync(join(root, 'net', 'ipv4', 'ip_forward'), '0\n');
    expect(await enableForwarding(4, root)).toBe(true);
    expect(readFileSync(join(root, 'net', 'ipv4', 'ip_forward'), 'utf8')).toBe('1\n');
    expect(await enableForwarding(4, root)).toBe(false);
    await expect(enableForwarding(6, root)).rejects.toMatchObject({
      code: 'NDL_NETWORK_ROUTE',
      message: expect.stringContaining('turn on forwarding (net.ipv6.conf.all.forwarding=1)'),
    });
  });
});

/**
 * Routes to the other nodes' pod CIDRs (`--pod-routes=host-gw`), as flannel's host-gw backend
 * or kubenet with cloud routes give them: every Node is watched (one informer), and for every
 * other node whose InternalIP is on a subnet of this host `<pod CIDR> via <InternalIP>` is in
 * the main routing table (IPv4 and IPv6; `route-plan.ts` decides), replaced when the node's
 * CIDR or IP changes, deleted when the node goes away. Forwarding is turned on for the families
 * of this node's pod CIDRs (`forwarding.ts`). The routes carry nodelet's route protocol number
 * (`host-routes.ts`): nodelet lists, replaces and deletes only those, and a route to a CIDR
 * someone else routes already is left alone.
 *
 * The node reports the outcome as upstream's cloud route controller does
 * (k8s.io/cloud-provider controllers/route/route_controller.go, `updateNetworkingCondition`):
 * `NetworkUnavailable=False` (`RouteCreated`, "RouteController created a route") once the node
 * has its pod CIDR and every route it should have is in place; `True` (`NoRouteCreated`,
 * "RouteController failed to create a route") while it has no pod CIDR or a route could not be
 * made (a `FailedToCreateRoute` Warning event on the Node says why). Nothing before the first
 * list of Nodes.
 *
 *   first list of Nodes ──► reconcile: list nodelet's routes (stale ones from an earlier run are deleted)
 *   Node added/changed/deleted ──► reconcile (coalesced, one at a time): plan ─► delete / replace / add the difference
 *   every resyncMs ──► reconcile with a fresh list (routes the kernel dropped, e.g. the link went down, come back)
 */
import { networkInterfaces } from 'node:os';
import type { Logger, NodeConditionContribution } from '@nodelet/plugin-api/v1';
import { errorDetail } from '../errors/index.ts';
import { enableForwarding } from './forwarding.ts';
import { hostRouteTable, type PodRoute, type RouteTable } from './host-routes.ts';
import { shellIpCommand } from './ip-shell.ts';
import type { NodeSource } from './node-watch.ts';
import { localPrefixes, planPodRoutes, type LocalPrefix, type PlannedRoute } from './route-plan.ts';

/** The condition type and upstream's route controller's reasons and messages for it. */
export const NETWORK_UNAVAILABLE = 'NetworkUnavailable';
const ROUTE_CREATED: NodeConditionContribution = {
  type: NETWORK_UNAVAILABLE,
  status: 'False',
  reason: 'RouteCreated',
  message: 'RouteController created a route',
};
const NO_ROUTE_CREATED: NodeConditionContribution = {
  type: NETWORK_UNAVAILABLE,
  status: 'True',
  reason: 'NoRouteCreated',
  message: 'RouteController failed to create a route',
};

/** How often the routes are checked against the kernel's (upstream's `--route-reconciliation-period` default). */
const RESYNC_MS = 10_000;

/** What the pod routes are built from (by the composition root). */
export interface PodRoutesOptions {
  nodeName: string;
  /** The pod bridge (`--pod-interface`): never a route's way out. */
  podInterface: string;
  nodes: NodeSource;
  log: Logger;
  /** Records an event on the Node. */
  nodeEvent(type: 'Normal' | 'Warning', reason: string, note: string): void;
  /** The routing table (tests fake it); default: the host's, through the pod network's helpers. */
  routes?: RouteTable;
  /** This host's interface addresses (tests fake them); default: `os.networkInterfaces()` less loopback and the pod bridge. */
  localPrefixes?: () => LocalPrefix[];
  /** Turns forwarding on for a family (tests fake it); default: `forwarding.ts` on /proc/sys. */
  enableForwarding?: (family: 4 | 6) => Promise<boolean>;
  /** Default 10 s. */
  resyncMs?: number;
}

/** The pod routes of one node (see the module comment). */
export class PodRoutes {
  /** nodelet's routes in the kernel, by destination (as far as nodelet knows). */
  private readonly installed = new Map<string, string>();
  /** Destinations whose last change failed, with the error. */
  private readonly failed = new Map<string, string>();
  /** Destinations routed by someone else (logged once). */
  private readonly foreign = new Set<string>();
  /** What was logged about skipped CIDRs, by `node/cidr` (so each reason is logged once). */
  private readonly skipLogged = new Map<string, string>();
  private readonly forwarding = new Set<4 | 6>();
  private readonly listeners: (() => void)[] = [];
  private readonly table: RouteTable;
  private readonly closeIp?: () => void;
  private current?: NodeConditionContribution;
  private relist = true;
  private running?: Promise<void>;
  private again = false;
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly o: PodRoutesOptions) {
    if (o.routes) this.table = o.routes;
    else {
      const ip = shellIpCommand();
      this.table = hostRouteTable(ip);
      this.closeIp = ip.close;
    }
  }

  /** Starts watching Nodes; the first reconcile follows the first list. */
  start(): void {
    this.o.nodes.start(() => void this.reconcile());
    this.timer = setInterval(() => {
      this.relist = true;
      void this.reconcile();
    }, this.o.resyncMs ?? RESYNC_MS);
    this.timer.unref();
  }

  /** The node's `NetworkUnavailable` condition (none before the first reconcile). */
  conditions(): NodeConditionContribution[] {
    return this.current ? [this.current] : [];
  }

  /** Runs `cb` when the condition changes. */
  onChange(cb: () => void): void {
    this.listeners.push(cb);
  }

  /** Stops watching; the routes stay (the next start finds them by their protocol). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.o.nodes.stop();
    await this.running?.catch(() => undefined);
    this.closeIp?.();
  }

  /** Asks for a reconcile: one runs at a time, and calls meanwhile coalesce into one more. */
  reconcile(): Promise<void> {
    if (this.stopped || !this.o.nodes.synced()) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const run = async () => {
      do {
        this.again = false;
        try {
          await this.sync();
        } catch (e) {
          this.o.log.error({ err: errorDetail(e) }, 'pod routes: reconcile failed');
        }
      } while (this.again && !this.stopped);
    };
    this.running = run().finally(() => (this.running = undefined));
    return this.running;
  }

  private async sync(): Promise<void> {
    const local = this.o.localPrefixes?.() ?? localPrefixes(networkInterfaces(), this.o.podInterface);
    const plan = planPodRoutes(this.o.nodes.list(), this.o.nodeName, local);
    this.logSkipped(plan.skipped);
    await this.ensureForwarding(plan.own);
    let listFailed: string | undefined;
    if (this.relist) {
      try {
        const listed = await this.table.list();
        this.installed.clear();
        for (const r of listed) this.installed.set(r.dst, r.via);
        this.relist = false;
      } catch (e) {
        listFailed = errorDetail(e);
        this.o.log.error({ err: listFailed }, 'pod routes: cannot list the routes nodelet installed');
      }
    }
    if (listFailed === undefined) {
      for (const [dst, via] of [...this.installed]) if (!plan.routes.has(dst)) await this.remove({ dst, via });
      for (const route of plan.routes.values()) await this.ensure(route);
    }
    for (const dst of [...this.failed.keys()]) if (!plan.routes.has(dst)) this.failed.delete(dst);
    for (const dst of [...this.foreign]) if (!plan.routes.has(dst)) this.foreign.delete(dst);
    const ok = plan.own.length > 0 && listFailed === undefined && this.failed.size === 0;
    this.setCondition(ok ? ROUTE_CREATED : NO_ROUTE_CREATED);
  }

  private async ensure(route: PlannedRoute): Promise<void> {
    const { dst, via, node } = route;
    const had = this.installed.get(dst);
    if (had === via) {
      this.failed.delete(dst);
      return;
    }
    try {
      if (had !== undefined) {
        await this.table.replace(route);
        this.o.log.info({ dst, via, was: had, node }, 'replaced the pod route to a node');
      } else if ((await this.table.add(route)) === 'exists') {
        if (!this.foreign.has(dst))
          this.o.log.warn({ dst, node }, "pod routes: a route to the node's pod CIDR exists that nodelet did not install; leaving it");
        this.foreign.add(dst);
        this.failed.delete(dst);
        return;
      } else {
        this.o.log.info({ dst, via, node }, 'installed the pod route to a node');
      }
      this.installed.set(dst, via);
      this.foreign.delete(dst);
      this.failed.delete(dst);
    } catch (e) {
      const why = errorDetail(e);
      if (this.failed.get(dst) !== why) {
        this.o.log.error({ dst, via, node, err: why }, 'pod routes: cannot install the route to a node');
        // Upstream's route controller's event reason and wording.
        this.o.nodeEvent('Warning', 'FailedToCreateRoute', `Could not create route ${dst} via ${via} for node ${node}: ${why}`);
      }
      this.failed.set(dst, why);
    }
  }

  private async remove({ dst, via }: PodRoute): Promise<void> {
    try {
      await this.table.remove(dst);
      this.installed.delete(dst);
      this.o.log.info({ dst, via }, 'deleted the pod route (its node is gone, or no longer routed so)');
    } catch (e) {
      this.o.log.error({ dst, via, err: errorDetail(e) }, 'pod routes: cannot delete a route nodelet installed; retried at the next resync');
      this.relist = true;
    }
  }

  private async ensureForwarding(own: readonly string[]): Promise<void> {
    const families = new Set(own.map((c) => (c.includes(':') ? 6 : 4) as 4 | 6));
    for (const family of families) {
      if (this.forwarding.has(family)) continue;
      try {
        const turned = await (this.o.enableForwarding ?? enableForwarding)(family);
        this.forwarding.add(family);
        if (turned) this.o.log.info({ family: `IPv${family}` }, 'turned on IP forwarding for the pod network');
      } catch (e) {
        this.forwarding.add(family); // once: the operator is told, and pods on this host still reach others
        const why = errorDetail(e);
        this.o.log.warn({ err: why }, 'pod routes: cannot turn on IP forwarding; packets for pods behind the pod bridge are not forwarded');
        this.o.nodeEvent('Warning', 'FailedToEnableForwarding', why);
      }
    }
  }

  private logSkipped(skipped: readonly { node: string; cidr: string; why: string }[]): void {
    const seen = new Set<string>();
    for (const s of skipped) {
      const key = `${s.node}/${s.cidr}`;
      seen.add(key);
      if (this.skipLogged.get(key) === s.why) continue;
      this.skipLogged.set(key, s.why);
      this.o.log.info({ node: s.node, podCIDR: s.cidr, why: s.why }, 'pod routes: no route to a node pod CIDR (reach it through a CNI plugin or cloud routes)');
    }
    for (const key of [...this.skipLogged.keys()]) if (!seen.has(key)) this.skipLogged.delete(key);
  }

  private setCondition(c: NodeConditionContribution): void {
    if (this.current?.status === c.status && this.current.reason === c.reason) return;
    this.current = c;
    this.o.log.info({ condition: `${c.type}=${c.status}`, reason: c.reason }, 'pod routes: node network condition');
    for (const cb of this.listeners) cb();
  }
}

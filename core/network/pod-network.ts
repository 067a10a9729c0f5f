/**
 * Pod networking of one node: IPs from the node's pod CIDRs (the node's
 * `spec.podCIDRs` in a cluster, else `--pod-cidr`), held on the pod interface,
 * recorded by the {@link IpAllocator} and released when the pod is gone.
 * nodelet runs no service proxy: Services reach these IPs through whatever
 * routes the cluster has to each node's pod CIDR (README "Pod networking").
 *
 *   no CIDR yet ──settle (first: waits for the node's CIDR)──► CIDRs known ──► ensure interface ──ok──► ready: setUp allocates + adds the IP
 *        │ (setUp gives [] meanwhile)          │
 *        │                                     └─ fails (no CAP_NET_ADMIN, no `ip`) ──► unavailable:
 *        │                                          log + node event once; setUp gives [] (pods run without IP)
 *        └─ CIDR unusable ──► unavailable (same)
 *   release(pod) / releaseExcept(live pods): the IP leaves the interface, then its record is removed.
 */
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import { errorDetail } from '../errors/index.ts';
import { parsePodCidr, type PodCidr } from './cidr.ts';
import type { FileWriter } from '../exec/index.ts';
import { IpAllocator } from './ip-allocator.ts';
import { PodInterface, type IpCommand } from './pod-interface.ts';
import { shellIpCommand } from './ip-shell.ts';

/** What the pod network is built from (by the composition root). */
export interface PodNetworkOptions {
  rootDir: string;
  /** The bridge name (`--pod-interface`). */
  interfaceName: string;
  /** `--pod-cidr` (standalone mode, or until the node has `spec.podCIDRs`). */
  podCIDRs: readonly string[];
  /** The node's `spec.podCIDRs` (cluster mode); undefined or empty while it has none. */
  nodePodCIDRs?: () => Promise<readonly string[] | undefined>;
  log: Logger;
  /** Records an event on the Node. */
  nodeEvent(type: 'Normal' | 'Warning', reason: string, note: string): void;
  /**
   * Cluster mode: how long the first set-up waits for kube-controller-manager to give the
   * node a pod CIDR (it does so just after the node registered); default 10 s. Later set-ups
   * look once. A cluster that allocates none costs its first pod this wait, once.
   */
  cidrWaitMs?: number;
  /** How often the node is read during that wait (default 500 ms). */
  cidrPollMs?: number;
  /** The `ip` command (tests fake it). */
  ip?: IpCommand;
  /** Writes the IP records (the composition root's Perl helper; default: libuv's pool). */
  files?: FileWriter;
}

type State = { kind: 'no-cidr' } | { kind: 'ready'; cidrs: PodCidr[] } | { kind: 'unavailable'; why: string };

/** The node's pod network. */
export class PodNetworkManager {
  private readonly allocator: IpAllocator;
  private readonly iface: PodInterface;
  private state: State = { kind: 'no-cidr' };
  private settling?: Promise<void>;
  private waited = false;

  constructor(private readonly o: PodNetworkOptions) {
    this.allocator = new IpAllocator(join(o.rootDir, 'network', 'allocations'), o.files);
    // One helper shell runs every `ip` call: spawning from nodelet itself costs more as it grows (ip-shell.ts).
    this.iface = new PodInterface(o.interfaceName, o.ip ?? shellIpCommand());
  }

  /** The interface's name. */
  get interfaceName(): string {
    return this.iface.name;
  }

  /**
   * The pod's IPs, set up on the interface: the same ones across restarts. Empty when the
   * node has no pod CIDR or the interface is unavailable. Throws `NDL_NETWORK_EXHAUSTED`
   * when the CIDR is full (the pod waits; upstream's `FailedCreatePodSandBox`).
   */
  async setUp(pod: V1Pod): Promise<string[]> {
    await this.settle();
    if (this.state.kind !== 'ready') return [];
    const uid = pod.metadata!.uid!;
    const cidrs = this.state.cidrs;
    const ips = await this.allocator.allocate(uid, cidrs);
    try {
      for (const ip of ips) {
        // The bridge may have been removed under nodelet (`ip link del`): make it again, once.
        await this.iface.add(ip).catch(async () => {
          await this.iface.ensure(cidrs.map((c) => `${c.gateway}/${c.prefix}`));
          await this.iface.add(ip);
        });
      }
    } catch (e) {
      await this.allocator.release(uid).catch(() => false);
      throw e;
    }
    return ips;
  }

  /** Frees the pod's IPs (the pod is gone); nothing when it held none. Never rejects (a failure is logged). */
  async release(pod: V1Pod): Promise<void> {
    await this.releaseUid(pod.metadata!.uid!);
  }

  /** Frees the IPs of pods not in `live` (deleted while nodelet was down). Never rejects. */
  async releaseExcept(live: readonly V1Pod[]): Promise<void> {
    const keep = new Set(live.map((p) => p.metadata?.uid));
    for (const uid of this.allocator.uids()) if (!keep.has(uid)) await this.releaseUid(uid);
  }

  private async releaseUid(uid: string): Promise<void> {
    const ips = this.allocator.get(uid);
    if (!ips) return;
    for (const ip of ips) {
      // A leftover address is harmless (adding it again is idempotent); the record must go.
      await this.iface.remove(ip).catch((e) => {
        if (this.state.kind !== 'unavailable') this.o.log.warn({ uid, ip, err: errorDetail(e) }, 'cannot remove a pod IP from the pod interface');
      });
    }
    try {
      await this.allocator.release(uid);
    } catch (e) {
      this.o.log.error({ uid, ips, err: errorDetail(e) }, 'cannot release pod IPs; they stay taken until a later release or restart');
      return;
    }
    this.o.log.info({ uid, ips }, 'released pod IPs');
  }

  /**
   * Moves out of `no-cidr` once the CIDRs are known (one attempt at a time; the first one in
   * cluster mode waits up to `cidrWaitMs` for the node's CIDR). The root starts it once the
   * node is registered, so the wait overlaps start-up.
   */
  settle(): Promise<void> {
    if (this.state.kind !== 'no-cidr') return Promise.resolve();
    this.settling ??= this.trySettle().finally(() => (this.settling = undefined));
    return this.settling;
  }

  private async trySettle(): Promise<void> {
    const deadline = !this.waited && this.o.nodePodCIDRs && this.o.podCIDRs.length === 0 ? Date.now() + (this.o.cidrWaitMs ?? 10_000) : 0;
    this.waited = true;
    let texts = await this.readNodeCidrs();
    while (texts.length === 0 && Date.now() < deadline) {
      // unref: the wait never keeps a stopping nodelet alive.
      await new Promise((r) => setTimeout(r, this.o.cidrPollMs ?? 500).unref());
      texts = await this.readNodeCidrs();
    }
    if (texts.length === 0) texts = this.o.podCIDRs;
    if (texts.length === 0) {
      if (deadline)
        this.o.log.info({}, 'the node has no pod CIDR (kube-controller-manager --allocate-node-cidrs, or --pod-cidr): pods get no IP until it has one');
      return;
    }
    let cidrs: PodCidr[];
    try {
      cidrs = texts.map(parsePodCidr);
      await this.iface.ensure(cidrs.map((c) => `${c.gateway}/${c.prefix}`));
    } catch (e) {
      const why = errorDetail(e);
      this.state = { kind: 'unavailable', why };
      this.o.log.error({ err: why, interface: this.iface.name }, 'pod network unavailable: pods get no IP (needs CAP_NET_ADMIN and iproute2)');
      this.o.nodeEvent('Warning', 'PodNetworkUnavailable', `pods on this node get no IP: ${why}`);
      return;
    }
    this.state = { kind: 'ready', cidrs };
    this.o.log.info({ podCIDRs: cidrs.map((c) => c.text), interface: this.iface.name }, 'pod network ready');
  }

  private async readNodeCidrs(): Promise<readonly string[]> {
    try {
      return (await this.o.nodePodCIDRs?.())?.filter((c) => c) ?? [];
    } catch (e) {
      this.o.log.warn({ err: errorDetail(e) }, 'cannot read the node pod CIDR');
      return [];
    }
  }
}

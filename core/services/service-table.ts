/**
 * The node's Service table: every Service and EndpointSlice of the cluster, as the informers
 * deliver them, indexed for the resolver's questions. A change is applied when it arrives, so
 * the next question sees it (no batching, no resync period):
 *
 *   Service added/updated/deleted ──► ServiceInfo, its virtual IPs in `vips`
 *   EndpointSlice added/updated/deleted ──► its Service's endpoints by port, rebuilt from that
 *                                           Service's slices only
 *
 * Virtual IPs: `ip|port|protocol` of each ClusterIP (and external / load-balancer IP) and port.
 */
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { endpointsByPort, portKey, serviceInfo, sliceService, type EndpointInfo, type ServiceInfo, type ServicePortInfo } from './service-model.ts';

/** A Service's virtual address and port. */
export interface VirtualPort {
  readonly service: ServiceInfo;
  readonly port: ServicePortInfo;
  /** An external or load-balancer IP (kube-proxy routes pods' connections to them to the cluster endpoints). */
  readonly external: boolean;
}

const vipKey = (ip: string, port: number, protocol: string) => `${ip}|${port}|${protocol}`;
const EMPTY: readonly EndpointInfo[] = [];

/** Services and their endpoints (see the module comment). */
export class ServiceTable {
  private readonly services = new Map<string, ServiceInfo>();
  private readonly vips = new Map<string, VirtualPort>();
  /** Service key → slice name → slice. */
  private readonly slices = new Map<string, Map<string, V1EndpointSlice>>();
  /** Slice `namespace/name` → the Service key it was filed under. */
  private readonly sliceOwner = new Map<string, string>();
  /** Service key → port key → endpoints. */
  private readonly endpoints = new Map<string, Map<string, EndpointInfo[]>>();
  /** Services were listed at least once. */
  servicesSynced = false;
  /** EndpointSlices were listed at least once. */
  slicesSynced = false;
  /** Why EndpointSlices are not listed (set while `slicesSynced` is false and a list failed). */
  slicesProblem = 'EndpointSlices not listed yet';

  /** @param nodeName this node (endpoints on it are local) */
  constructor(private readonly nodeName: string) {}

  /** Adds or replaces a Service. */
  upsertService(svc: V1Service): void {
    const info = serviceInfo(svc);
    this.dropVips(info.key);
    this.services.set(info.key, info);
    for (const port of info.ports) {
      for (const ip of info.clusterIPs) this.vips.set(vipKey(ip, port.port, port.protocol), { service: info, port, external: false });
      for (const ip of info.externalIPs) {
        const k = vipKey(ip, port.port, port.protocol);
        if (!this.vips.has(k)) this.vips.set(k, { service: info, port, external: true });
      }
    }
  }

  /** Removes a Service (its slices stay until they are deleted too, as in the API). */
  removeService(svc: V1Service): void {
    const key = `${svc.metadata?.namespace ?? ''}/${svc.metadata?.name ?? ''}`;
    this.dropVips(key);
    this.services.delete(key);
  }

  /** Adds or replaces an EndpointSlice. */
  upsertSlice(slice: V1EndpointSlice): void {
    const id = `${slice.metadata?.namespace ?? ''}/${slice.metadata?.name ?? ''}`;
    const owner = sliceService(slice);
    const before = this.sliceOwner.get(id);
    if (before !== undefined && before !== owner) this.removeSlice(slice, before);
    if (owner === undefined) return;
    let m = this.slices.get(owner);
    if (!m) this.slices.set(owner, (m = new Map()));
    m.set(id, slice);
    this.sliceOwner.set(id, owner);
    this.rebuild(owner);
  }

  /** Removes an EndpointSlice (`owner`: the Service it was filed under, when known). */
  removeSlice(slice: V1EndpointSlice, owner?: string): void {
    const id = `${slice.metadata?.namespace ?? ''}/${slice.metadata?.name ?? ''}`;
    const key = owner ?? this.sliceOwner.get(id) ?? sliceService(slice);
    this.sliceOwner.delete(id);
    if (key === undefined) return;
    const m = this.slices.get(key);
    if (!m?.delete(id)) return;
    if (m.size === 0) this.slices.delete(key);
    this.rebuild(key);
  }

  /** The Service `namespace/name`. */
  service(namespace: string, name: string): ServiceInfo | undefined {
    return this.services.get(`${namespace}/${name}`);
  }

  /** The Service port whose virtual address `ip` (canonical) and `port`/`protocol` are, if any. */
  virtualPort(ip: string, port: number, protocol: string): VirtualPort | undefined {
    return this.vips.get(vipKey(ip, port, protocol));
  }

  /** The endpoints of Service `key`'s port named `portName` with `protocol`. */
  portEndpoints(key: string, portName: string, protocol: string): readonly EndpointInfo[] {
    return this.endpoints.get(key)?.get(portKey(portName, protocol)) ?? EMPTY;
  }

  /** Every endpoint of Service `key` (all ports; one entry per address and port). */
  allEndpoints(key: string): readonly EndpointInfo[] {
    const m = this.endpoints.get(key);
    return m ? [...m.values()].flat() : EMPTY;
  }

  /** How many Services and virtual ports the table holds. */
  get counts(): { services: number; virtualPorts: number } {
    return { services: this.services.size, virtualPorts: this.vips.size };
  }

  private dropVips(key: string): void {
    const old = this.services.get(key);
    if (!old) return;
    for (const port of old.ports) {
      for (const ip of [...old.clusterIPs, ...old.externalIPs]) {
        const k = vipKey(ip, port.port, port.protocol);
        if (this.vips.get(k)?.service.key === key) this.vips.delete(k);
      }
    }
  }

  private rebuild(key: string): void {
    const m = this.slices.get(key);
    if (m) this.endpoints.set(key, endpointsByPort(m.values(), this.nodeName));
    else this.endpoints.delete(key);
  }
}

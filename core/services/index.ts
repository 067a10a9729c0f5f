/**
 * The face of core/services: Kubernetes Services for Wasm pods' own outbound paths (nodelet
 * runs no kube-proxy). One Service table per node, fed by one informer on Services and one on
 * EndpointSlices, and the resolver providers reach as `ProviderContext.services`.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger, PodRef, ServiceResolver } from '@nodelet/plugin-api/v1';
import type { KubeClients } from '../kube/index.ts';
import { podDns } from './dns-search.ts';
import { NodeServiceResolver } from './service-resolver.ts';
import { ServiceTable } from './service-table.ts';
import { watchServices } from './service-watch.ts';

export { NodeServiceResolver, type ResolverOptions } from './service-resolver.ts';
export { ServiceTable } from './service-table.ts';

/** What {@link startServices} is built from. */
export interface ServicesOptions {
  readonly clients: KubeClients;
  readonly nodeName: string;
  /** `--cluster-domain` ('' when unset). */
  readonly clusterDomain: string;
  /** The node's `topology.kubernetes.io/zone`, for topology hints. */
  readonly zone?: string;
  /** The pod core runs under `ref` (its DNS settings), if any. */
  readonly pod: (ref: PodRef) => V1Pod | undefined;
  readonly log: Logger;
}

/** The node's Service resolver and its informers. */
export interface NodeServices {
  readonly resolver: ServiceResolver;
  stop(): void;
}

/**
 * Starts the informers and builds the resolver; resolves once both lists were tried (a failed
 * one is logged and retried in the background: the resolver works with what it has).
 */
export async function startServices(o: ServicesOptions): Promise<NodeServices> {
  const table = new ServiceTable(o.nodeName);
  const resolver = new NodeServiceResolver({
    table,
    clusterDomain: o.clusterDomain,
    topology: { nodeName: o.nodeName, zone: o.zone },
    podDns: (ref) => {
      const pod = o.pod(ref);
      return pod && pod.metadata?.uid === ref.uid ? podDns(pod) : undefined;
    },
  });
  const watch = await watchServices({ clients: o.clients, table, log: o.log });
  if (!o.clusterDomain) o.log.info('no --cluster-domain: Wasm pods reach Services by ClusterIP only, not by name');
  return { resolver, stop: () => watch.stop() };
}

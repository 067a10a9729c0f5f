/**
 * Which endpoints of a Service port take a connection from this node, as kube-proxy's
 * CategorizeEndpoints decides (pkg/proxy/topology.go, v1.36):
 *
 *   cluster endpoints: ready ones available for the topology mode; none → serving-terminating ones
 *   local endpoints:   ready ones on this node; none → serving-terminating ones on this node
 *   topology mode:     every ready endpoint hinted for nodes and one for this node → same node;
 *                      else every ready endpoint hinted for zones and one for this node's zone →
 *                      same zone; else none (all cluster endpoints)
 *
 * ClusterIP traffic uses the local endpoints under `internalTrafficPolicy: Local`, the cluster
 * ones otherwise; traffic from a pod to an external or load-balancer IP uses the cluster ones
 * (kube-proxy short-circuits pod traffic to the cluster chain whatever the external policy).
 */
import type { EndpointInfo } from './service-model.ts';

/** Where the node stands, for topology hints. */
export interface NodeTopology {
  readonly nodeName: string;
  /** The node's `topology.kubernetes.io/zone` label, if any. */
  readonly zone?: string;
}

/** The usable endpoints of one Service port for one kind of traffic, and why there may be none. */
export interface Categorized {
  readonly usable: readonly EndpointInfo[];
  /** Some endpoint is usable from somewhere in the cluster (ready, or serving and terminating). */
  readonly anyEndpoints: boolean;
}

type TopologyMode = '' | 'node' | 'zone';

function topologyMode(endpoints: readonly EndpointInfo[], at: NodeTopology): TopologyMode {
  let anyReady = false;
  let allNodeHints = true;
  let forNode = false;
  let allZoneHints = true;
  let forZone = false;
  for (const ep of endpoints) {
    if (!ep.ready) continue;
    anyReady = true;
    if (!ep.nodeHints) allNodeHints = false;
    else if (ep.nodeHints.has(at.nodeName)) forNode = true;
    if (!ep.zoneHints) allZoneHints = false;
    else if (at.zone !== undefined && ep.zoneHints.has(at.zone)) forZone = true;
  }
  if (!anyReady) return '';
  if (allNodeHints && forNode) return 'node';
  if (allZoneHints && forZone) return 'zone';
  return '';
}

function availableForTopology(ep: EndpointInfo, mode: TopologyMode, at: NodeTopology): boolean {
  if (mode === 'node') return ep.nodeHints?.has(at.nodeName) ?? false;
  if (mode === 'zone') return at.zone !== undefined && (ep.zoneHints?.has(at.zone) ?? false);
  return true;
}

const servingTerminating = (ep: EndpointInfo) => ep.serving && ep.terminating;

/** The cluster endpoints (topology-aware, see the module comment). */
export function clusterEndpoints(endpoints: readonly EndpointInfo[], at: NodeTopology): Categorized {
  const mode = topologyMode(endpoints, at);
  let usable = endpoints.filter((ep) => ep.ready && availableForTopology(ep, mode, at));
  if (usable.length === 0) usable = endpoints.filter(servingTerminating);
  return { usable, anyEndpoints: usable.length > 0 };
}

/** The local endpoints (this node's; see the module comment). */
export function localEndpoints(endpoints: readonly EndpointInfo[]): Categorized {
  const anyEndpoints = endpoints.some((ep) => ep.ready || servingTerminating(ep));
  let usable = endpoints.filter((ep) => ep.local && ep.ready);
  if (usable.length === 0) usable = endpoints.filter((ep) => ep.local && servingTerminating(ep));
  return { usable, anyEndpoints };
}

/** The face of core/network: pod IPs from the node's pod CIDRs, on a nodelet-managed bridge; routes to other nodes' pod CIDRs. */
export { PodNetworkManager, type PodNetworkOptions } from './pod-network.ts';
export { PodRoutes, type PodRoutesOptions } from './pod-routes.ts';
export { apiNodeSource } from './node-watch.ts';

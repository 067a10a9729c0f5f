/** The face of core/network: pod IPs from the node's pod CIDRs, on a nodelet-managed bridge. */
export { PodNetworkManager, type PodNetworkOptions } from './pod-network.ts';

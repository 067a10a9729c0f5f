/** The face of core/node: what other folders may use; everything else in the folder is private to it. */
export { detectNodeIP, readHostInfo } from './host-info.ts';
export { heartbeatTimeoutMs, LeaseController } from './lease.ts';
export { NodeController } from './node-controller.ts';
export { nodeLabels, nodeResources, type NodeShape } from './node-object.ts';
export { watchOwnNode } from './own-node-watch.ts';

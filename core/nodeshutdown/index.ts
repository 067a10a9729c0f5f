/** The face of core/nodeshutdown: graceful node shutdown (upstream pkg/kubelet/nodeshutdown). */
export { NodeShutdownManager, type NodeShutdownOptions } from './shutdown-manager.ts';

/**
 * The address probes and hooks reach a pod at when their action names no
 * `host`: the pod's IP (`status.podIP`, else the first of `status.podIPs`)
 * when the pod has its own network; `127.0.0.1` when it runs with
 * `hostNetwork: true` or has no pod IP (no pod network: a WASI module then
 * listens on the node's own interfaces, and loopback reaches it without
 * depending on which node address was detected).
 */
import type { V1Pod } from '@kubernetes/client-node';

/** The default probe/hook host of `pod`. */
export function targetHost(pod: V1Pod): string {
  if (pod.spec?.hostNetwork) return '127.0.0.1';
  return pod.status?.podIP || pod.status?.podIPs?.[0]?.ip || '127.0.0.1';
}

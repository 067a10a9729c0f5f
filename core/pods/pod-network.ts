/**
 * The pod network as the pod path sees it (upstream: the network part of
 * `RunPodSandbox` / `StopPodSandbox`). core/network implements it; the
 * composition root passes it to the {@link PodController}. Without one, pods
 * get no IP (as before pod networking existed).
 */
import type { V1Pod } from '@kubernetes/client-node';

/** Pod IPs: set up before a pod's containers start, released when the pod is gone or finished. */
export interface PodNetwork {
  /** The pod's IPs, primary first (same ones on every call); empty when the node gives none. Throws when it cannot give one yet. */
  setUp(pod: V1Pod): Promise<string[]>;
  /** Frees the pod's IPs; a no-op when it holds none. Never rejects. */
  release(pod: V1Pod): Promise<void>;
}

/** `pod` with `status.podIP`/`podIPs` set to `ips` (unchanged when `ips` is empty), for what reads them while starting containers. */
export function withPodIPs(pod: V1Pod, ips: readonly string[]): V1Pod {
  if (ips.length === 0) return pod;
  return { ...pod, status: { ...pod.status, podIP: ips[0], podIPs: ips.map((ip) => ({ ip })) } };
}

const IP_FIELDS = new Set(['status.podIP', 'status.podIPs']);

/**
 * True when a downward API volume of `pod` (plain or projected) shows the pod's IPs: its volumes
 * must wait for them. Any other pod's volumes are set up while its IPs are (upstream mounts
 * volumes before it creates the sandbox, so its volumes never wait for the network).
 */
export function volumesShowPodIPs(pod: V1Pod): boolean {
  for (const v of pod.spec?.volumes ?? []) {
    const items = [...(v.downwardAPI?.items ?? []), ...(v.projected?.sources ?? []).flatMap((s) => s.downwardAPI?.items ?? [])];
    if (items.some((i) => IP_FIELDS.has(i.fieldRef?.fieldPath ?? ''))) return true;
  }
  return false;
}

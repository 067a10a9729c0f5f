/**
 * A container's outbound allow-list, from the pod annotation
 * `wasi.nodelet.dev/allowed-outbound-hosts` (outbound-hosts.mjs has the entries' grammar: Spin's
 * `allowed_outbound_hosts`). Without the annotation every destination is allowed, as before; with
 * it, wasi:http's outgoing requests, wasi:sockets' connections and destinations, and preview1's
 * `wasi_experimental_http` requests go only where an entry allows. An annotation that does not
 * parse fails the container's start (`InvalidArgument`), naming the entry and why.
 */
import { providerError, type ContainerSpec } from '@nodelet/plugin-api/v1';
import { ALLOWED_OUTBOUND_HOSTS_ANNOTATION, AllowedHostError, parseAllowedOutboundHostsAnnotation, type OutboundPolicy } from './outbound-hosts.mjs';

export { ALLOWED_OUTBOUND_HOSTS_ANNOTATION };

/** The pod's allow-list for `spec`'s container; undefined when the pod sets none (everything allowed). */
export function outboundPolicy(spec: Pick<ContainerSpec, 'name' | 'pod'>): OutboundPolicy | undefined {
  const value = spec.pod.annotations?.[ALLOWED_OUTBOUND_HOSTS_ANNOTATION];
  if (value === undefined) return undefined;
  try {
    return parseAllowedOutboundHostsAnnotation(value);
  } catch (e) {
    if (e instanceof AllowedHostError)
      throw providerError(
        'InvalidArgument',
        `container ${spec.name}: error parsing annotation ${JSON.stringify(ALLOWED_OUTBOUND_HOSTS_ANNOTATION)}: ${e.message}`,
      );
    throw e;
  }
}

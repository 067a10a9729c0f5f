/**
 * The pod annotations Krustlet's WASI provider read for `wasi_experimental_http`,
 * parsed the way Krustlet parsed them (crates/wasi-provider, states/container/waiting.rs):
 *  - `alpha.wasi.krustlet.dev/allowed-domains`: a JSON list of strings, each a
 *    URL whose host is allowed (e.g. `["https://api.example.com"]`), or
 *    `"insecure:allow-all"`. Absent: no destination is allowed.
 *  - `alpha.wasi.krustlet.dev/max-concurrent-requests`: an unsigned integer, the
 *    responses a module may hold open at once. Absent: no limit.
 * An annotation that does not parse fails the container's start (Krustlet
 * terminated the container with the same message). The pod's
 * `wasi.nodelet.dev/allowed-outbound-hosts` (outbound-config.ts) applies too: a request
 * must be allowed by both.
 */
import { providerError, type ContainerSpec } from '@nodelet/plugin-api/v1';
import { outboundPolicy } from './outbound-config.ts';
import type { OutboundPolicy } from './outbound-hosts.mjs';

/** Annotation listing the allowed destinations. */
export const ALLOWED_DOMAINS_ANNOTATION = 'alpha.wasi.krustlet.dev/allowed-domains';
/** Annotation bounding the open responses. */
export const MAX_CONCURRENT_REQUESTS_ANNOTATION = 'alpha.wasi.krustlet.dev/max-concurrent-requests';

/** What the worker gets (worker/wasi-experimental-http.mjs). */
export interface ExperimentalHttpConfig {
  /** null: nothing allowed. */
  readonly allowedHosts: string[] | null;
  readonly maxConcurrentRequests?: number;
  /** The pod's outbound allow-list (Spin's grammar); none: only `allowedHosts` applies. */
  readonly outbound?: OutboundPolicy;
}

/** Parses the pod's annotations; rejects (InvalidArgument) one that does not parse. */
export function experimentalHttpConfig(spec: Pick<ContainerSpec, 'name' | 'pod'>): ExperimentalHttpConfig {
  const annotations = spec.pod.annotations ?? {};
  const bad = (key: string, why: string) => providerError('InvalidArgument', `container ${spec.name}: error parsing annotation ${JSON.stringify(key)}: ${why}`);
  let allowedHosts: string[] | null = null;
  const domains = annotations[ALLOWED_DOMAINS_ANNOTATION];
  if (domains !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(domains);
    } catch (e) {
      throw bad(ALLOWED_DOMAINS_ANNOTATION, (e as Error).message);
    }
    if (!Array.isArray(parsed) || !parsed.every((d) => typeof d === 'string')) throw bad(ALLOWED_DOMAINS_ANNOTATION, 'expected a JSON list of strings');
    allowedHosts = parsed;
  }
  const max = annotations[MAX_CONCURRENT_REQUESTS_ANNOTATION];
  let maxConcurrentRequests: number | undefined;
  if (max !== undefined) {
    if (!/^\+?\d+$/.test(max) || Number(max) > 0xffffffff)
      throw bad(MAX_CONCURRENT_REQUESTS_ANNOTATION, `${JSON.stringify(max)} is not an unsigned 32-bit integer`);
    maxConcurrentRequests = Number(max);
  }
  const outbound = outboundPolicy(spec);
  return { allowedHosts, maxConcurrentRequests, ...(outbound ? { outbound } : {}) };
}

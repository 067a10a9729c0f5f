/**
 * How a wasi:http component served with an instance per request is bounded, from the
 * container's resources and the pod's annotations:
 *  - instances kept ready (`warm`): two per CPU of `resources.limits.cpu` (1–8), 2 without a limit;
 *    idle ones beyond are released after 30 s;
 *  - instances at once (`max`, the requests in flight): `wasi.nodelet.dev/http-max-concurrency`
 *    (default 256), and no more than the memory limit holds at the module's starting memory size;
 *    requests beyond wait in a queue (4 × max), then get 503;
 *  - `wasi.nodelet.dev/http-request-timeout`: a duration (`500ms`, `30s`, `2m`) after which a
 *    request still running is ended with 500; none by default, as in Spin and wasmtime serve.
 * An annotation that does not parse fails the container's start (InvalidArgument).
 */
import { providerError, type ContainerSpec } from '@nodelet/plugin-api/v1';

/** Annotation bounding the requests one container serves at once. */
export const HTTP_MAX_CONCURRENCY_ANNOTATION = 'wasi.nodelet.dev/http-max-concurrency';
/** Annotation setting the per-request timeout. */
export const HTTP_REQUEST_TIMEOUT_ANNOTATION = 'wasi.nodelet.dev/http-request-timeout';
/** Requests served at once without the annotation. */
export const DEFAULT_MAX_CONCURRENCY = 256;

/** The bounds of one container's instances (worker-protocol.ts HttpWorkerData). */
export interface HttpServing {
  readonly bounds: { readonly warm: number; readonly max: number };
  readonly requestTimeoutMs?: number;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * The serving bounds of `spec`, whose module starts with `startBytes` of memory.
 * Throws InvalidArgument for an annotation that does not parse.
 */
export function httpServing(spec: Pick<ContainerSpec, 'name' | 'pod' | 'limits'>, startBytes: number): HttpServing {
  const annotations = spec.pod.annotations ?? {};
  const bad = (key: string, why: string) => providerError('InvalidArgument', `container ${spec.name}: error parsing annotation ${JSON.stringify(key)}: ${why}`);
  let max = DEFAULT_MAX_CONCURRENCY;
  const maxText = annotations[HTTP_MAX_CONCURRENCY_ANNOTATION];
  if (maxText !== undefined) {
    if (!/^\d+$/.test(maxText) || Number(maxText) < 1 || Number(maxText) > 65536)
      throw bad(HTTP_MAX_CONCURRENCY_ANNOTATION, `${JSON.stringify(maxText)} is not an integer from 1 to 65536`);
    max = Number(maxText);
  }
  const memory = spec.limits.memoryBytes;
  if (memory !== undefined && startBytes > 0) max = Math.max(1, Math.min(max, Math.floor(memory / startBytes)));
  let requestTimeoutMs: number | undefined;
  const timeoutText = annotations[HTTP_REQUEST_TIMEOUT_ANNOTATION];
  if (timeoutText !== undefined) {
    const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(timeoutText);
    if (!m || Number(m[1]) <= 0)
      throw bad(HTTP_REQUEST_TIMEOUT_ANNOTATION, `${JSON.stringify(timeoutText)} is not a positive duration such as 500ms, 30s or 2m`);
    requestTimeoutMs = Math.round(Number(m[1]) * UNITS[m[2]!]!);
  }
  const cpu = spec.limits.cpuMillis;
  const warm = Math.min(max, cpu === undefined ? 2 : Math.max(1, Math.min(8, Math.ceil(cpu / 500))));
  return { bounds: { warm, max }, requestTimeoutMs };
}

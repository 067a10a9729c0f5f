/**
 * Parses the query of `GET /containerLogs/...` into `PodLogOptions` the way
 * the upstream kubelet does (`getContainerLogs` in pkg/kubelet/server/server.go):
 *
 * - `tail` is the old name of `tailLines`; `tail=all` means no limit.
 * - Booleans (`follow`, `previous`, `timestamps`): absent, `false` or `0` are
 *   false, any other value (even empty) is true (apimachinery's query conversion).
 * - Integers (`tailLines`, `sinceSeconds`, `limitBytes`) must parse as int64,
 *   `sinceTime` as RFC 3339; otherwise 400 (upstream: "Unable to decode query.").
 * - Then `ValidatePodLogOptions`: tailLines >= 0, limitBytes > 0, sinceSeconds > 0,
 *   not both sinceSeconds and sinceTime; otherwise 422 (upstream: "Invalid request.").
 *
 * Status codes match upstream; messages say which parameter is wrong.
 */

/** Decoded `PodLogOptions` (only what the kubelet uses). */
export interface PodLogQuery {
  readonly follow: boolean;
  readonly previous: boolean;
  readonly timestamps: boolean;
  readonly tailLines?: number;
  readonly limitBytes?: number;
  readonly sinceSeconds?: number;
  /** Present (possibly `null` for an empty/`null` value, meaning no limit) when `sinceTime` was given. */
  readonly sinceTime?: Date | null;
}

/** A parse result: options or an HTTP error. */
export type LogQueryResult =
  { readonly ok: true; readonly options: PodLogQuery } | { readonly ok: false; readonly status: 400 | 422; readonly message: string };

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

class DecodeError extends Error {}

function bool(q: URLSearchParams, key: string): boolean {
  const v = q.get(key);
  if (v === null) return false;
  const l = v.toLowerCase();
  return !(l === 'false' || l === '0');
}

function int64(q: URLSearchParams, key: string): number | undefined {
  const v = q.get(key);
  if (v === null) return undefined;
  if (!/^[+-]?\d+$/.test(v)) throw new DecodeError(`${key}: ${JSON.stringify(v)} is not an integer`);
  const n = BigInt(v);
  if (n > INT64_MAX || n < INT64_MIN) throw new DecodeError(`${key}: ${v} is out of range`);
  // Beyond 2^53 the exact value does not matter for lines, bytes or seconds.
  return Number(n);
}

function time(q: URLSearchParams, key: string): Date | null | undefined {
  const v = q.get(key);
  if (v === null) return undefined;
  if (v === '' || v === 'null') return null;
  const d = new Date(v);
  if (!RFC3339.test(v) || Number.isNaN(d.getTime())) throw new DecodeError(`${key}: ${JSON.stringify(v)} is not an RFC 3339 time`);
  return d;
}

function decode(input: URLSearchParams): PodLogQuery {
  const q = new URLSearchParams(input);
  const tail = q.get('tail');
  if (tail) {
    if (tail === 'all') q.delete('tailLines');
    else q.set('tailLines', tail);
  }
  return {
    follow: bool(q, 'follow'),
    previous: bool(q, 'previous'),
    timestamps: bool(q, 'timestamps'),
    tailLines: int64(q, 'tailLines'),
    limitBytes: int64(q, 'limitBytes'),
    sinceSeconds: int64(q, 'sinceSeconds'),
    sinceTime: time(q, 'sinceTime'),
  };
}

function validate(o: PodLogQuery): string[] {
  const errs: string[] = [];
  if (o.tailLines !== undefined && o.tailLines < 0) errs.push('tailLines: must be greater than or equal to 0');
  if (o.limitBytes !== undefined && o.limitBytes < 1) errs.push('limitBytes: must be greater than 0');
  if (o.sinceSeconds !== undefined && o.sinceTime !== undefined) {
    errs.push('at most one of `sinceTime` or `sinceSeconds` may be specified');
  } else if (o.sinceSeconds !== undefined && o.sinceSeconds < 1) {
    errs.push('sinceSeconds: must be greater than 0');
  }
  return errs;
}

/** Parses and validates a containerLogs query (first value of each parameter, like Go). */
export function parseLogQuery(q: URLSearchParams): LogQueryResult {
  let options: PodLogQuery;
  try {
    options = decode(q);
  } catch (e) {
    if (e instanceof DecodeError) return { ok: false, status: 400, message: `unable to decode query: ${e.message}` };
    throw e;
  }
  const errs = validate(options);
  if (errs.length) return { ok: false, status: 422, message: `invalid request: ${errs.join('; ')}` };
  return { ok: true, options };
}

/** The instant before which lines are dropped, or undefined for no limit. */
export function sinceInstant(o: PodLogQuery, now: number = Date.now()): Date | undefined {
  if (o.sinceSeconds !== undefined) return new Date(now - o.sinceSeconds * 1000);
  return o.sinceTime ?? undefined;
}

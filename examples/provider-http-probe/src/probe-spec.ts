/**
 * What one probe container does, from its pod spec: the image is the URL to
 * GET, the args are flags.
 *
 *   image: http://svc.example:8080/healthz
 *   args:  [--expect=2xx, --interval=5s, --attempts=0, --timeout=10s, --contains=ok]
 *
 * Every parse failure is a branded `InvalidArgument` error naming the container.
 */
import { providerError } from '@nodelet/plugin-api/v1';

/** A parsed probe. */
export interface ProbeSpec {
  readonly url: URL;
  /** Accepted status codes, as written (`2xx`, `200,204`). */
  readonly expect: string;
  /** Pause between attempts. */
  readonly intervalMs: number;
  /** Attempts before the probe gives up (exit 1); 0 = until it succeeds. */
  readonly attempts: number;
  /** Time limit of one request. */
  readonly timeoutMs: number;
  /** Text the response body must contain (read up to 1 MiB). */
  readonly contains?: string;
}

/** The defaults of the flags. */
export const PROBE_DEFAULTS = { expect: '2xx', intervalMs: 5000, attempts: 0, timeoutMs: 10_000 } as const;

const bad = (container: string, message: string) => providerError('InvalidArgument', `container "${container}": ${message}`);

/** Parses `500ms`, `5s`, `2m`, or a plain number of seconds. */
export function parseDuration(s: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(s);
  if (!m) return undefined;
  const n = Number(m[1]) * ({ ms: 1, s: 1000, m: 60_000 }[m[2] ?? 's'] ?? 1000);
  return Number.isFinite(n) ? Math.round(n) : undefined;
}

/** True when `status` matches `expect` (comma-separated `NNN` or `Nxx`). */
export function statusMatches(expect: string, status: number): boolean {
  return expect.split(',').some((p) => (/^\dxx$/.test(p) ? Math.floor(status / 100) === Number(p[0]) : Number(p) === status));
}

/** Checks a container's image is an http(s) URL on an allowed host. */
export function parseProbeUrl(container: string, image: string | undefined, allowHosts?: readonly string[]): URL {
  let url: URL;
  try {
    url = new URL(image ?? '');
  } catch {
    throw bad(container, `image ${JSON.stringify(image ?? '')} is not a URL (an http-probe image is the URL to GET)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw bad(container, `image ${JSON.stringify(image)} is not an http(s) URL`);
  if (url.username || url.password) throw bad(container, 'the image URL must not carry credentials');
  if (allowHosts && !allowHosts.includes(url.hostname.toLowerCase())) {
    throw bad(container, `host "${url.hostname}" is not allowed on this node (allowed: ${allowHosts.join(', ') || 'none'})`);
  }
  return url;
}

/** Parses a container's flags (its args, `$(VAR)` already expanded by core). */
export function parseProbeArgs(container: string, args: readonly string[]): Omit<ProbeSpec, 'url'> {
  const out: { -readonly [K in keyof Omit<ProbeSpec, 'url'>]: Omit<ProbeSpec, 'url'>[K] } = { ...PROBE_DEFAULTS };
  for (const arg of args) {
    const m = /^--([a-z]+)=(.*)$/s.exec(arg);
    if (!m) throw bad(container, `argument ${JSON.stringify(arg)} is not a --flag=value`);
    const [, flag, value] = m as unknown as [string, string, string];
    const duration = () => {
      const ms = parseDuration(value);
      if (ms === undefined || ms <= 0) throw bad(container, `--${flag}=${value} is not a positive duration (e.g. 500ms, 5s, 1m)`);
      return ms;
    };
    switch (flag) {
      case 'expect':
        if (!/^(\d{3}|\dxx)(,(\d{3}|\dxx))*$/.test(value)) throw bad(container, `--expect=${value} is not a list of status codes (e.g. 200,204 or 2xx)`);
        out.expect = value;
        break;
      case 'interval':
        out.intervalMs = duration();
        break;
      case 'timeout':
        out.timeoutMs = duration();
        break;
      case 'attempts':
        if (!/^\d+$/.test(value)) throw bad(container, `--attempts=${value} is not a whole number`);
        out.attempts = Number(value);
        break;
      case 'contains':
        out.contains = value;
        break;
      default:
        throw bad(container, `unknown flag --${flag} (known: --expect, --interval, --attempts, --timeout, --contains)`);
    }
  }
  return out;
}

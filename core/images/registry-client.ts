/**
 * A client for the OCI distribution API (`/v2/<repo>/manifests|blobs/...`) on
 * Node's global fetch. HTTPS by default; plain HTTP for registries listed as
 * insecure and, like docker, for localhost / 127.0.0.0/8 / ::1.
 * Every non-2xx answer becomes a {@link RegistryError} carrying the registry's reason.
 */
import { createHash } from 'node:crypto';
import type { RegistryCredential } from '@nodelet/plugin-api/v1';
import { nodeletError } from '../errors/index.ts';
import { MANIFEST_ACCEPT } from './manifest.ts';
import { DEFAULT_NO_PROGRESS_TIMEOUT_MS, guardResponse, MAX_MANIFEST_BYTES, readCapped } from './body-limits.ts';
import { RegistryAuth } from './registry-auth.ts';
import { registryErrorFrom, RegistryError } from './registry-error.ts';

/** How long a registry may take to answer a request with its headers. */
const HEADERS_TIMEOUT_MS = 30_000;

/** Options of a {@link RegistryClient}. */
export interface RegistryClientOptions {
  /** Hosts (`host` or `host:port`) spoken to over plain HTTP. */
  readonly insecureRegistries?: readonly string[];
  /** The fetch to use (tests may wrap it); defaults to the global fetch. */
  readonly fetch?: typeof fetch;
  readonly userAgent?: string;
  /** A response body (blob, manifest, token) that sends nothing for this long fails the pull (default 5 min, containerd's). */
  readonly noProgressTimeoutMs?: number;
  /** How long a registry (or its token endpoint) may take to send response headers (default 30 s). */
  readonly headersTimeoutMs?: number;
}

/** Where a request goes and as whom. */
export interface RepositoryTarget {
  /** Registry API host with port (`registry-1.docker.io`, `127.0.0.1:5000`). */
  readonly host: string;
  /** Repository path (`library/nginx`). */
  readonly repository: string;
  readonly credential?: RegistryCredential;
  readonly signal?: AbortSignal;
}

/** A fetched manifest; `digest` is computed from the bytes. */
export interface FetchedManifest {
  readonly digest: string;
  readonly mediaType: string | undefined;
  readonly bytes: Buffer;
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\]|::1)$/;

/** Strips a `:port` (keeping bracketed IPv6 intact). */
function hostname(host: string): string {
  const m = host.match(/^(\[[^\]]+\]|[^:]+)(?::\d+)?$/);
  return m ? m[1]! : host;
}

/** Talks the distribution API to any number of registries. */
export class RegistryClient {
  private readonly fetchFn: typeof fetch;
  private readonly insecure: ReadonlySet<string>;
  private readonly auth: RegistryAuth;
  private readonly userAgent: string;
  private readonly progressMs: number;
  private readonly headersMs: number;

  constructor(opts: RegistryClientOptions = {}) {
    this.fetchFn = opts.fetch ?? ((...args) => fetch(...args));
    this.insecure = new Set(opts.insecureRegistries ?? []);
    this.userAgent = opts.userAgent ?? 'nodelet';
    this.progressMs = opts.noProgressTimeoutMs ?? DEFAULT_NO_PROGRESS_TIMEOUT_MS;
    this.headersMs = opts.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
    this.auth = new RegistryAuth((url, init) => this.guardedFetch(String(url), init ?? {}, init?.signal ?? undefined), this.userAgent);
  }

  /** True when `host` is spoken to over plain HTTP. */
  isInsecure(host: string): boolean {
    return this.insecure.has(host) || this.insecure.has(hostname(host)) || LOOPBACK.test(hostname(host));
  }

  /** `http(s)://host/v2/<repository>/`. */
  baseUrl(t: RepositoryTarget): string {
    return `${this.isInsecure(t.host) ? 'http' : 'https'}://${t.host}/v2/${t.repository}/`;
  }

  /** Resolves a tag or digest to the manifest digest without its body (undefined when the registry does not say). */
  async headManifest(t: RepositoryTarget, reference: string): Promise<string | undefined> {
    const res = await this.send(t, 'HEAD', `manifests/${reference}`, MANIFEST_ACCEPT);
    const digest = res.headers.get('docker-content-digest');
    return digest && /^sha256:[0-9a-f]{64}$/.test(digest) ? digest : undefined;
  }

  /** GETs a manifest; when `reference` is a digest the bytes must hash to it (`NDL_IMAGE_DIGEST`). */
  async getManifest(t: RepositoryTarget, reference: string): Promise<FetchedManifest> {
    const res = await this.send(t, 'GET', `manifests/${reference}`, MANIFEST_ACCEPT);
    const length = Number(res.headers.get('content-length') ?? 0);
    if (length > MAX_MANIFEST_BYTES) {
      await res.body?.cancel();
      throw nodeletError('NDL_IMAGE_FORMAT', `manifest of ${length} bytes exceeds ${MAX_MANIFEST_BYTES}`);
    }
    const bytes = await readCapped(res.body, MAX_MANIFEST_BYTES, `manifest ${reference}`);
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    if (reference.startsWith('sha256:') && digest !== reference) {
      throw nodeletError('NDL_IMAGE_DIGEST', `manifest ${reference} has digest ${digest}`);
    }
    return { digest, mediaType: res.headers.get('content-type') ?? undefined, bytes };
  }

  /** GETs a blob (following redirects); the caller streams and verifies `res.body`. */
  async getBlob(t: RepositoryTarget, digest: string): Promise<Response> {
    return this.send(t, 'GET', `blobs/${digest}`, '*/*');
  }

  /** One request with authentication: up-front header, then at most one answered challenge. */
  private async send(t: RepositoryTarget, method: string, path: string, accept: string, extra: RequestExtra = {}): Promise<Response> {
    const url = /^https?:\/\//.test(path) ? path : this.baseUrl(t) + path;
    const scope = `repository:${t.repository}:${extra.push ? 'push,pull' : 'pull'}`;
    let authorization = this.auth.upFront(t.host, scope, t.credential);
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = { Accept: accept, 'User-Agent': this.userAgent, ...extra.headers };
      if (authorization) headers.Authorization = authorization;
      const res = await this.guardedFetch(url, { method, headers, body: extra.body as BodyInit | undefined, redirect: 'follow' }, t.signal);
      if (res.ok || extra.okStatus?.includes(res.status)) return res;
      if (res.status === 401 && attempt === 0) {
        const retry = await this.auth.answer(t.host, scope, t.credential, res.headers.get('www-authenticate'), t.signal);
        if (retry && retry !== authorization) {
          await res.body?.cancel();
          authorization = retry;
          continue;
        }
      }
      throw method === 'HEAD' ? headError(res, path) : await registryErrorFrom(res, `${method} ${path.replace(/^https?:\/\/[^/]+/, '').replace(/\?.*$/, '')}`);
    }
  }

  /**
   * A fetch whose response headers must arrive within the headers timeout and whose
   * body must keep making progress (see body-limits.ts), so an unresponsive registry
   * or token endpoint fails the pull (ErrImagePull, then back-off) instead of
   * hanging the pod's sync; a body that keeps flowing may take as long as it needs.
   */
  private async guardedFetch(url: string, init: RequestInit, signal?: AbortSignal): Promise<Response> {
    const timeout = new AbortController();
    const host = new URL(url).host;
    const timer = setTimeout(() => timeout.abort(nodeletError('NDL_IMAGE_PULL', `no response from ${host} within ${this.headersMs / 1000}s`)), this.headersMs);
    let res: Response;
    const signals = signal ? AbortSignal.any([signal, timeout.signal]) : timeout.signal;
    try {
      res = await this.fetchFn(url, { ...init, signal: signals }).catch((e: unknown) => {
        // A kept-alive connection the registry closed as the request went out: retried once, as Go's
        // transport (containerd) retries an idempotent request that failed on a reused connection.
        if (!signals.aborted && (init.method === 'GET' || init.method === 'HEAD') && closedBeforeAnswer(e))
          return this.fetchFn(url, { ...init, signal: signals });
        throw e;
      });
    } catch (e) {
      throw timeout.signal.aborted ? timeout.signal.reason : e;
    } finally {
      clearTimeout(timer);
    }
    const path = new URL(url).pathname;
    return guardResponse(res, this.progressMs, `${host}${path}`, (e) => timeout.abort(e));
  }

  /**
   * A request for pushing: `pathOrUrl` is relative to `/v2/<repo>/` or an absolute
   * upload `Location`; authenticates with the `push,pull` scope.
   */
  pushRequest(
    t: RepositoryTarget,
    method: string,
    pathOrUrl: string,
    init: { headers?: Record<string, string>; body?: Uint8Array; okStatus?: number[] } = {},
  ): Promise<Response> {
    return this.send(t, method, pathOrUrl, '*/*', { ...init, push: true });
  }
}

/** Extra parts of a request. */
interface RequestExtra {
  readonly headers?: Record<string, string>;
  readonly body?: Uint8Array;
  /** Non-2xx statuses returned rather than thrown (`404` for an existence check). */
  readonly okStatus?: readonly number[];
  /** Ask for `push,pull` rather than `pull`. */
  readonly push?: boolean;
}

/** HEAD answers have no body: name the status the way the registry would. */
function headError(res: Response, path: string): RegistryError {
  const known: Record<number, [string, string]> = {
    401: ['UNAUTHORIZED', 'unauthorized: authentication required'],
    403: ['DENIED', 'denied: requested access to the resource is denied'],
    404: ['MANIFEST_UNKNOWN', 'manifest unknown'],
  };
  const [code, text] = known[res.status] ?? [undefined, `unexpected status ${res.status} ${res.statusText}`.trim()];
  return new RegistryError(res.status, code, `${text} (HEAD ${path}: HTTP ${res.status})`);
}

/** Whether a fetch failed because the connection closed before any answer (undici's `other side closed` / a reset). */
export function closedBeforeAnswer(e: unknown): boolean {
  const code = (e as { cause?: { code?: unknown } })?.cause?.code;
  return e instanceof TypeError && (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET');
}

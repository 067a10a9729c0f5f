/**
 * A client for the OCI distribution API (`/v2/<repo>/manifests|blobs/...`) over
 * registry-transport.ts. HTTPS by default; plain HTTP for registries listed as
 * insecure and, like docker, for localhost / 127.0.0.0/8 / ::1.
 * Every non-2xx answer becomes a {@link RegistryError} carrying the registry's reason.
 */
import { createHash } from 'node:crypto';
import type { RegistryCredential } from '@nodelet/plugin-api/v1';
import { nodeletError } from '../errors/index.ts';
import { MANIFEST_ACCEPT } from './manifest.ts';
import { DEFAULT_NO_PROGRESS_TIMEOUT_MS, discardBody, dropBody, MAX_MANIFEST_BYTES, readCapped } from './body-limits.ts';
import { RegistryAuth } from './registry-auth.ts';
import { registryErrorFrom, RegistryError } from './registry-error.ts';
import { headerOf, isOk, registryTransport, statusText, type RegistryResponse, type RegistryTransport } from './registry-transport.ts';

/** How long a registry may take to answer a request with its headers. */
const HEADERS_TIMEOUT_MS = 30_000;

/** Options of a {@link RegistryClient}. */
export interface RegistryClientOptions {
  /** Hosts (`host` or `host:port`) spoken to over plain HTTP. */
  readonly insecureRegistries?: readonly string[];
  /** The transport to use (tests may wrap one); defaults to {@link registryTransport} with the timeouts below. */
  readonly transport?: RegistryTransport;
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
  private readonly transport: RegistryTransport;
  private readonly insecure: ReadonlySet<string>;
  private readonly auth: RegistryAuth;
  private readonly userAgent: string;

  constructor(opts: RegistryClientOptions = {}) {
    this.transport =
      opts.transport ??
      registryTransport({
        headersTimeoutMs: opts.headersTimeoutMs ?? HEADERS_TIMEOUT_MS,
        noProgressTimeoutMs: opts.noProgressTimeoutMs ?? DEFAULT_NO_PROGRESS_TIMEOUT_MS,
      });
    this.insecure = new Set(opts.insecureRegistries ?? []);
    this.userAgent = opts.userAgent ?? 'nodelet';
    this.auth = new RegistryAuth(this.transport, this.userAgent);
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
    await discardBody(res.body);
    const digest = headerOf(res, 'docker-content-digest');
    return digest && /^sha256:[0-9a-f]{64}$/.test(digest) ? digest : undefined;
  }

  /** GETs a manifest; when `reference` is a digest the bytes must hash to it (`NDL_IMAGE_DIGEST`). */
  async getManifest(t: RepositoryTarget, reference: string): Promise<FetchedManifest> {
    const res = await this.send(t, 'GET', `manifests/${reference}`, MANIFEST_ACCEPT);
    const length = Number(headerOf(res, 'content-length') ?? 0);
    if (length > MAX_MANIFEST_BYTES) {
      dropBody(res.body);
      throw nodeletError('NDL_IMAGE_FORMAT', `manifest of ${length} bytes exceeds ${MAX_MANIFEST_BYTES}`);
    }
    const bytes = await readCapped(res.body, MAX_MANIFEST_BYTES, `manifest ${reference}`);
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    if (reference.startsWith('sha256:') && digest !== reference) {
      throw nodeletError('NDL_IMAGE_DIGEST', `manifest ${reference} has digest ${digest}`);
    }
    return { digest, mediaType: headerOf(res, 'content-type'), bytes };
  }

  /** GETs a blob (following redirects); the caller streams and verifies `res.body`. */
  async getBlob(t: RepositoryTarget, digest: string): Promise<RegistryResponse> {
    return this.send(t, 'GET', `blobs/${digest}`, '*/*');
  }

  /** One request with authentication: up-front header, then at most one answered challenge. */
  private async send(t: RepositoryTarget, method: string, path: string, accept: string, extra: RequestExtra = {}): Promise<RegistryResponse> {
    const url = /^https?:\/\//.test(path) ? path : this.baseUrl(t) + path;
    const scope = `repository:${t.repository}:${extra.push ? 'push,pull' : 'pull'}`;
    let authorization = this.auth.upFront(t.host, scope, t.credential);
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = { Accept: accept, 'User-Agent': this.userAgent, ...extra.headers };
      if (authorization) headers.Authorization = authorization;
      const res = await this.transport(url, { method, headers, body: extra.body, signal: t.signal });
      if (isOk(res) || extra.okStatus?.includes(res.status)) return res;
      if (res.status === 401 && attempt === 0) {
        const retry = await this.auth.answer(t.host, scope, t.credential, headerOf(res, 'www-authenticate'), t.signal);
        if (retry && retry !== authorization) {
          await discardBody(res.body);
          authorization = retry;
          continue;
        }
      }
      throw method === 'HEAD' ? headError(res, path) : await registryErrorFrom(res, `${method} ${path.replace(/^https?:\/\/[^/]+/, '').replace(/\?.*$/, '')}`);
    }
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
  ): Promise<RegistryResponse> {
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
function headError(res: RegistryResponse, path: string): RegistryError {
  const known: Record<number, [string, string]> = {
    401: ['UNAUTHORIZED', 'unauthorized: authentication required'],
    403: ['DENIED', 'denied: requested access to the resource is denied'],
    404: ['MANIFEST_UNKNOWN', 'manifest unknown'],
  };
  const [code, text] = known[res.status] ?? [undefined, `unexpected status ${res.status} ${statusText(res.status)}`.trim()];
  return new RegistryError(res.status, code, `${text} (HEAD ${path}: HTTP ${res.status})`);
}

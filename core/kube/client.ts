/**
 * The Kubernetes API clients nodelet uses, built once from a kubeconfig.
 */
import type * as https from 'node:https';
import * as k8s from '@kubernetes/client-node';
import { Agent as UndiciAgent } from 'undici';
import { subscribe } from 'node:diagnostics_channel';
import { nodeletError, type NodeletError } from '../errors/index.ts';
import { restClientRequests } from '../metrics/index.ts';

/** The typed API groups nodelet talks to. */
export interface KubeClients {
  kc: k8s.KubeConfig;
  core: k8s.CoreV1Api;
  coordination: k8s.CoordinationV1Api;
  events: k8s.EventsV1Api;
  node: k8s.NodeV1Api;
  storage: k8s.StorageV1Api;
}

/** The client certificate and key to use now (PEM), e.g. from a rotating certificate manager. */
export type ClientCredentials = () => { cert: string; key: string } | undefined;

/**
 * Loads a kubeconfig file and creates the clients (sharing connections per apiserver);
 * `credentials`, if given, override the kubeconfig's client certificate.
 */
export function createKubeClients(kubeconfigPath: string, credentials?: ClientCredentials): KubeClients {
  const kc = new SharedConnectionKubeConfig(credentials);
  kc.loadFromFile(kubeconfigPath);
  return fromKubeConfig(kc);
}

type Dispatcher = NonNullable<ReturnType<k8s.RequestContext['getDispatcher']>>;

interface Pool {
  dispatcher: Dispatcher;
  /** The client certificate and key (PEM text) the pool's connections were made with. */
  cert: string;
  key: string;
}

const pemText = (x: unknown): string => (typeof x === 'string' ? x : Buffer.isBuffer(x) ? x.toString('utf8') : '');

/**
 * A KubeConfig whose API calls and watches share one keep-alive connection pool
 * (an undici Agent) per apiserver, user and client certificate. client-node 2.x gives every request
 * a new undici dispatcher (so every call would pay a TLS handshake); nodelet talks
 * to one apiserver with one identity, like the upstream kubelet's single transport.
 *
 * It overrides the public `applySecurityAuthentication`, which API clients made by
 * `makeApiClient` and `Watch` both call: client-node sets the headers and builds a
 * dispatcher from the current TLS material; the first one built for a server is
 * kept and set on every later request (the later ones are dropped unused). When
 * the client certificate changes — a rotated file named by the kubeconfig, or
 * `credentials` returning a new pair — new requests get a new pool and the old one
 * is closed gracefully, as upstream's rotating transport: idle connections now,
 * requests in flight and watches when they end.
 */
class SharedConnectionKubeConfig extends k8s.KubeConfig {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly credentials?: ClientCredentials) {
    super();
  }

  override async applySecurityAuthentication(context: k8s.RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const fresh = context.getDispatcher();
    const cluster = this.getCurrentCluster();
    if (cluster) countRequestsTo(cluster.server);
    if (!fresh || !cluster || cluster.proxyUrl) return;
    const tls: https.RequestOptions = {};
    await this.applyToHTTPSOptions(tls);
    const creds = this.credentials?.();
    const cert = creds?.cert ?? pemText(tls.cert);
    const key = creds?.key ?? pemText(tls.key);
    const id = JSON.stringify([cluster.server, this.getCurrentUser()?.name ?? '']);
    const pool = this.pools.get(id);
    if (pool && pool.cert === cert && pool.key === key) {
      context.setDispatcher(pool.dispatcher);
      return;
    }
    if (pool) void pool.dispatcher.close().catch(() => undefined);
    const dispatcher = creds ? this.dispatcherWith(cluster, tls, creds) : fresh;
    this.pools.set(id, { dispatcher, cert, key });
    context.setDispatcher(dispatcher);
  }

  /** A keep-alive dispatcher like client-node's, with `creds` as the client certificate. */
  private dispatcherWith(cluster: k8s.Cluster, tls: https.RequestOptions, creds: { cert: string; key: string }): Dispatcher {
    const o = this.createDispatcherOptions(cluster, {
      ca: tls.ca,
      rejectUnauthorized: tls.rejectUnauthorized,
      servername: tls.servername,
      cert: creds.cert,
      key: creds.key,
    });
    if (o.type !== 'agent') throw nodeletError('NDL_API_CLIENT', `client certificate override needs a direct TLS connection (got ${o.type})`);
    return new UndiciAgent({ connect: o.connect }) as unknown as Dispatcher;
  }

  /** How many connection pools exist (one per apiserver, user and certificate in use). */
  get poolCount(): number {
    return this.pools.size;
  }
}

interface UndiciRequest {
  origin?: string;
  method?: string;
}
const apiOrigins = new Set<string>();
let subscribed = false;
const counted = new WeakSet<object>();

function count(request: UndiciRequest, code: string): void {
  const origin = String(request.origin ?? '');
  if (!apiOrigins.has(origin) || counted.has(request)) return; // a watch that fails after its headers counts once
  counted.add(request);
  restClientRequests.inc({ code, host: new URL(origin).host, method: request.method ?? '' });
}

/**
 * Counts every request to the apiserver at `server` in rest_client_requests_total
 * {code, host, method}, like client-go's metric (`<error>` when no response came).
 * Read from undici's diagnostics channels (client-node 2.x sends through undici),
 * so it sees API calls and watches whatever dispatcher they use.
 */
function countRequestsTo(server: string): void {
  let origin: string;
  try {
    origin = new URL(server).origin;
  } catch {
    return;
  }
  apiOrigins.add(origin);
  if (subscribed) return;
  subscribed = true;
  subscribe('undici:request:headers', (m) => {
    const { request, response } = m as { request: UndiciRequest; response: { statusCode: number } };
    count(request, String(response.statusCode));
  });
  subscribe('undici:request:error', (m) => count((m as { request: UndiciRequest }).request, '<error>'));
}

/** Creates the clients from a loaded KubeConfig. */
export function fromKubeConfig(kc: k8s.KubeConfig): KubeClients {
  return {
    kc,
    core: kc.makeApiClient(k8s.CoreV1Api),
    coordination: kc.makeApiClient(k8s.CoordinationV1Api),
    events: kc.makeApiClient(k8s.EventsV1Api),
    node: kc.makeApiClient(k8s.NodeV1Api),
    storage: kc.makeApiClient(k8s.StorageV1Api),
  };
}

/** Request options that send a body as the given patch type. */
export const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
/** Request options that send a body as a strategic merge patch. */
export const strategicMergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch);

/** The HTTP status of an API error (client-node's ApiException, or one made by {@link apiError}), or undefined. */
function apiStatus(e: unknown): number | undefined {
  const code = (e as { code?: unknown; httpStatus?: unknown })?.code;
  if (typeof code === 'number') return code;
  const status = (e as { httpStatus?: unknown })?.httpStatus;
  return typeof status === 'number' ? status : undefined;
}

/** An API error as NDL_API_REQUEST whose detail is the apiserver's Status message, keeping its HTTP status as `httpStatus`. */
export function apiError(e: unknown): NodeletError & { readonly httpStatus?: number } {
  return Object.assign(nodeletError('NDL_API_REQUEST', apiMessage(e), e), { httpStatus: apiStatus(e) });
}

/** True when the API answered 404. */
export const isApiNotFound = (e: unknown): boolean => apiStatus(e) === 404;
/** True when the API answered 409 (conflict / already exists). */
export const isApiConflict = (e: unknown): boolean => apiStatus(e) === 409;

/** A one-line description of an API error: the apiserver's Status message when there is one. */
export function apiMessage(e: unknown): string {
  const body = (e as { body?: unknown })?.body;
  if (typeof body === 'string') {
    try {
      const s = JSON.parse(body) as { message?: string };
      if (s.message) return s.message;
    } catch {
      /* not JSON */
    }
  }
  // Some responses come back with the Status already parsed.
  if (typeof body === 'object' && body !== null && typeof (body as { message?: unknown }).message === 'string') return (body as { message: string }).message;
  // Otherwise client-node's ApiException names the status in its second line ("HTTP-Code: 401\nMessage: Unauthorized").
  const reason = e instanceof Error ? /^HTTP-Code: \d+\nMessage: (.+)$/m.exec(e.message)?.[1] : undefined;
  if (reason && reason !== 'Unknown API Status Code!') return reason;
  return e instanceof Error ? e.message.split('\n')[0]! : String(e);
}

/**
 * The Kubernetes API clients nodelet uses, built once from a kubeconfig: the
 * API groups of `api-groups.ts` over one {@link ApiTransport} (one keep-alive
 * pool per apiserver, user and client certificate; see `api-transport.ts`).
 */
import { isNodeletError, nodeletError, type NodeletError } from '../errors/index.ts';
import { CoordinationV1Api, CoreV1Api, EventsV1Api, NodeV1Api, ResourceV1Api, ReviewApi, StorageV1Api } from './api-groups.ts';
import { ApiTransport, type ClientCredentials } from './api-transport.ts';

export { mergePatch, strategicMergePatch } from './api-groups.ts';
import { KubeConfig } from './kubeconfig.ts';

/** The typed API groups nodelet talks to. */
export interface KubeClients {
  kc: KubeConfig;
  /** The requests and watches under every group (informers and CSR watches use it directly). */
  transport: ApiTransport;
  core: CoreV1Api;
  coordination: CoordinationV1Api;
  events: EventsV1Api;
  node: NodeV1Api;
  storage: StorageV1Api;
  reviews: ReviewApi;
  resource: ResourceV1Api;
}

export type { ClientCredentials };

/**
 * Loads a kubeconfig file and creates the clients (sharing connections per apiserver);
 * `credentials`, if given, override the kubeconfig's client certificate.
 */
export function createKubeClients(kubeconfigPath: string, credentials?: ClientCredentials): KubeClients {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  return fromTransport(new ApiTransport(kc, credentials));
}

/** Creates the clients over a transport. */
export function fromTransport(transport: ApiTransport): KubeClients {
  return {
    kc: transport.kc,
    transport,
    core: new CoreV1Api(transport),
    coordination: new CoordinationV1Api(transport),
    events: new EventsV1Api(transport),
    node: new NodeV1Api(transport),
    storage: new StorageV1Api(transport),
    reviews: new ReviewApi(transport),
    resource: new ResourceV1Api(transport),
  };
}

/**
 * The same clients over the same connections, with requests that give up after
 * `timeoutMs`: upstream's kubelet builds such a "heartbeat client" for the node's
 * status and Lease.
 */
export function withTimeout(clients: KubeClients, timeoutMs: number): KubeClients {
  return fromTransport(clients.transport.withTimeout(timeoutMs));
}

/** The HTTP status of an API error (from {@link ApiTransport}, {@link apiError}, or a test's `{ code: 404 }`), or undefined. */
export function apiStatus(e: unknown): number | undefined {
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
  if (isNodeletError(e)) return e.detail;
  // Otherwise client-node's ApiException names the status in its second line ("HTTP-Code: 401\nMessage: Unauthorized").
  const reason = e instanceof Error ? /^HTTP-Code: \d+\nMessage: (.+)$/m.exec(e.message)?.[1] : undefined;
  if (reason && reason !== 'Unknown API Status Code!') return reason;
  return e instanceof Error ? e.message.split('\n')[0]! : String(e);
}

/**
 * The Kubernetes API clients nodelet uses, built once from a kubeconfig.
 */
import * as k8s from '@kubernetes/client-node';

/** The typed API groups nodelet talks to. */
export interface KubeClients {
  kc: k8s.KubeConfig;
  core: k8s.CoreV1Api;
  coordination: k8s.CoordinationV1Api;
  events: k8s.EventsV1Api;
  node: k8s.NodeV1Api;
  storage: k8s.StorageV1Api;
}

/** Loads a kubeconfig file and creates the clients (sharing connections per apiserver). */
export function createKubeClients(kubeconfigPath: string): KubeClients {
  const kc = new SharedConnectionKubeConfig();
  kc.loadFromFile(kubeconfigPath);
  return fromKubeConfig(kc);
}

type Dispatcher = ReturnType<k8s.RequestContext['getDispatcher']>;

/**
 * A KubeConfig whose API calls and watches share one keep-alive connection
 * pool per apiserver and user. client-node 2.x gives every request a new undici
 * dispatcher (so every call would pay a TLS handshake); nodelet talks to one
 * apiserver with one identity, like the upstream kubelet's single transport.
 * It overrides the public `applySecurityAuthentication` (which API clients made
 * by `makeApiClient` and `Watch` both call): the first dispatcher client-node
 * builds for a server is kept and set on every later request, whose own, still
 * unused, dispatcher is dropped. TLS material is therefore read once; a rotated
 * client certificate needs a restart.
 */
export class SharedConnectionKubeConfig extends k8s.KubeConfig {
  private readonly dispatchers = new Map<string, NonNullable<Dispatcher>>();

  override async applySecurityAuthentication(context: k8s.RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const fresh = context.getDispatcher();
    if (!fresh) return;
    const key = JSON.stringify([this.getCurrentCluster()?.server ?? '', this.getCurrentUser()?.name ?? '']);
    const shared = this.dispatchers.get(key);
    if (shared) context.setDispatcher(shared);
    else this.dispatchers.set(key, fresh);
  }

  /** How many connection pools exist (one per apiserver and user). */
  get dispatcherCount(): number { return this.dispatchers.size; }
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

/** The HTTP status of an API error (client-node's ApiException), or undefined. */
export function apiStatus(e: unknown): number | undefined {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'number' ? code : undefined;
}

/** True when the API answered 404. */
export const isApiNotFound = (e: unknown): boolean => apiStatus(e) === 404;
/** True when the API answered 409 (conflict / already exists). */
export const isApiConflict = (e: unknown): boolean => apiStatus(e) === 409;

/** A one-line description of an API error: the apiserver's Status message when there is one. */
export function apiMessage(e: unknown): string {
  const body = (e as { body?: unknown })?.body;
  if (typeof body === 'string') {
    try { const s = JSON.parse(body) as { message?: string }; if (s.message) return s.message; } catch { /* not JSON */ }
  }
  return e instanceof Error ? e.message.split('\n')[0]! : String(e);
}

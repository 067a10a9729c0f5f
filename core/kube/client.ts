/**
 * The Kubernetes API clients nodelet uses, built once from a kubeconfig.
 */
import * as https from 'node:https';
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

/** The client certificate and key to use now (PEM), e.g. from a rotating certificate manager. */
export type ClientCredentials = () => { cert: string; key: string } | undefined;

/** Loads a kubeconfig file and creates the clients; `credentials`, if given, override the kubeconfig's client certificate. */
export function createKubeClients(kubeconfigPath: string, credentials?: ClientCredentials): KubeClients {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  shareConnections(kc, credentials);
  return fromKubeConfig(kc);
}

type AgentFactory = (cluster: k8s.Cluster | null, options: https.AgentOptions) => unknown;

/**
 * client-node 1.x builds a new https.Agent for every request, so every API call
 * pays a TLS handshake. nodelet talks to one apiserver with one identity, so all
 * calls (and watches) share one keep-alive agent per server and client certificate.
 *
 * When the client certificate changes (a rotated `kubelet-client-current.pem`, or
 * `credentials` returning a new pair), new requests get a new agent and the old one
 * is retired as upstream's rotating transport does, but gently: its idle sockets are
 * closed now and its busy ones (requests in flight, watches) when they finish, so no
 * request fails and no connection outlives its turn with the old certificate.
 */
export function shareConnections(kc: k8s.KubeConfig, credentials?: ClientCredentials): void {
  const target = kc as unknown as { createAgent: AgentFactory };
  const original = target.createAgent.bind(kc);
  const agents = new Map<string, { agent: https.Agent; cert: unknown; key: unknown }>();
  target.createAgent = (cluster, options) => {
    const creds = credentials?.();
    const opts = creds ? { ...options, cert: creds.cert, key: creds.key } : options;
    if (!cluster?.server.startsWith('https:') || cluster.proxyUrl) return original(cluster, opts);
    const entry = agents.get(cluster.server);
    if (entry && sameMaterial(entry.cert, opts.cert) && sameMaterial(entry.key, opts.key)) return entry.agent;
    if (entry) retireAgent(entry.agent);
    const agent = new https.Agent({ ...opts, keepAlive: true, keepAliveMsecs: 30_000 });
    agents.set(cluster.server, { agent, cert: opts.cert, key: opts.key });
    return agent;
  };
}

function sameMaterial(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const buf = (x: unknown) => (typeof x === 'string' ? Buffer.from(x) : Buffer.isBuffer(x) ? x : undefined);
  const [x, y] = [buf(a), buf(b)];
  return x !== undefined && y !== undefined && x.equals(y);
}

/** Stops an agent from reusing connections: idle sockets close now, busy ones once their request ends. */
export function retireAgent(agent: https.Agent): void {
  (agent as unknown as { keepAlive: boolean }).keepAlive = false;
  for (const list of Object.values(agent.freeSockets)) for (const s of list ?? []) s.destroy();
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
  // Some responses (e.g. 401) come back with the Status already parsed.
  if (typeof body === 'object' && body !== null && typeof (body as { message?: unknown }).message === 'string') return (body as { message: string }).message;
  // Otherwise client-node's ApiException names the status in its second line ("HTTP-Code: 401\nMessage: Unauthorized").
  const reason = e instanceof Error ? /^HTTP-Code: \d+\nMessage: (.+)$/m.exec(e.message)?.[1] : undefined;
  if (reason && reason !== 'Unknown API Status Code!') return reason;
  return e instanceof Error ? e.message.split('\n')[0]! : String(e);
}

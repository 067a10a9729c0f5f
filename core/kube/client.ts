/**
 * The Kubernetes API clients nodelet uses, built once from a kubeconfig.
 */
import * as https from 'node:https';
import type { ClientRequest, IncomingMessage } from 'node:http';
import * as k8s from '@kubernetes/client-node';
import { restClientRequests } from '../metrics/kubelet-metrics.ts';

/** The typed API groups nodelet talks to. */
export interface KubeClients {
  kc: k8s.KubeConfig;
  core: k8s.CoreV1Api;
  coordination: k8s.CoordinationV1Api;
  events: k8s.EventsV1Api;
  node: k8s.NodeV1Api;
  storage: k8s.StorageV1Api;
}

/** Loads a kubeconfig file and creates the clients. */
export function createKubeClients(kubeconfigPath: string): KubeClients {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  shareConnections(kc);
  return fromKubeConfig(kc);
}

type AgentFactory = (cluster: k8s.Cluster | null, options: https.AgentOptions) => unknown;

/**
 * client-node 1.x builds a new https.Agent for every request, so every API call
 * pays a TLS handshake. nodelet talks to one apiserver with one identity, so all
 * calls (and watches) share one keep-alive agent per server (TLS material is read
 * once, like the upstream kubelet's transport; a rotated client cert needs a restart).
 */
export function shareConnections(kc: k8s.KubeConfig): void {
  const target = kc as unknown as { createAgent: AgentFactory };
  const original = target.createAgent.bind(kc);
  const agents = new Map<string, https.Agent>();
  target.createAgent = (cluster, options) => {
    if (!cluster?.server.startsWith('https:') || cluster.proxyUrl) return original(cluster, options);
    let agent = agents.get(cluster.server);
    if (!agent) {
      agent = countRequests(new https.Agent({ ...options, keepAlive: true, keepAliveMsecs: 30_000 }), new URL(cluster.server).host);
      agents.set(cluster.server, agent);
    }
    return agent;
  };
}

/**
 * Counts every request made through `agent` in rest_client_requests_total
 * {code, host, method}, like client-go's metric (`<error>` when no response came).
 */
export function countRequests(agent: https.Agent, host: string): https.Agent {
  const inner = agent as unknown as { addRequest(req: ClientRequest, options: unknown): void };
  const addRequest = inner.addRequest.bind(agent);
  inner.addRequest = (req, options) => {
    let counted = false;
    const count = (code: string) => { if (!counted) { counted = true; restClientRequests.inc({ code, host, method: req.method }); } };
    req.once('response', (res: IncomingMessage) => count(String(res.statusCode)));
    req.once('error', () => count('<error>'));
    addRequest(req, options);
  };
  return agent;
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

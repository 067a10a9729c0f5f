/** Kubernetes clients and small waits for e2e tests, as the cluster admin. */
import * as k8s from '@kubernetes/client-node';
import type { ClusterInfo } from '../../cluster/control-plane.ts';

/** Admin API clients for the test cluster. */
export function adminClients(info: ClusterInfo) {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(info.adminKubeconfig);
  return { kc, core: kc.makeApiClient(k8s.CoreV1Api), apps: kc.makeApiClient(k8s.AppsV1Api), node: kc.makeApiClient(k8s.NodeV1Api), storage: kc.makeApiClient(k8s.StorageV1Api), version: kc.makeApiClient(k8s.VersionApi) };
}

/** Polls `fn` until it returns a truthy value; returns it. */
export async function eventually<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60_000, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try { const v = await fn(); if (v) return v; } catch (e) { last = e; }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

/** Creates a namespace with a unique name and returns it. */
export async function freshNamespace(core: k8s.CoreV1Api, prefix: string): Promise<string> {
  const name = `${prefix}-${Math.random().toString(36).slice(2, 7)}`;
  await core.createNamespace({ body: { metadata: { name } } });
  return name;
}

/** The node condition `type` of `node`, if any. */
export function condition(node: k8s.V1Node, type: string): k8s.V1NodeCondition | undefined {
  return node.status?.conditions?.find((c) => c.type === type);
}

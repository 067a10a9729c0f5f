/** Pod templates and namespace helpers for the bench. */
import type * as k8s from '@kubernetes/client-node';
import { WASM_TOLERATION } from '../../test/e2e/support/images.ts';
import { HOLLOW_TAINT } from '../../test/cluster/hollow-node.ts';
import { HOLLOW_NODE, KWOK_NODE, KWOK_TAINT, NODELET_NODE, type Clients } from './env.ts';

/** Where a pod goes: nodelet, kwok, or kubemark's hollow node (the upstream kubelet, fake runtime). */
export type Target = 'nodelet' | 'kwok' | 'hollow';

const PLACEMENT: Record<Target, { node: string; toleration: k8s.V1Toleration }> = {
  nodelet: { node: NODELET_NODE, toleration: WASM_TOLERATION },
  kwok: { node: KWOK_NODE, toleration: { ...KWOK_TAINT, operator: 'Equal' } },
  hollow: { node: HOLLOW_NODE, toleration: { ...HOLLOW_TAINT, operator: 'Equal' } },
};

/** A pod spec pinned (through the scheduler, by hostname label) to `target`. */
export function podSpec(target: Target, image: string, args: string[], extra: Partial<k8s.V1PodSpec> = {}): k8s.V1PodSpec {
  const { node, toleration } = PLACEMENT[target];
  return {
    nodeSelector: { 'kubernetes.io/hostname': node },
    tolerations: [toleration],
    terminationGracePeriodSeconds: 5,
    containers: [{ name: 'main', image, args }],
    ...extra,
  };
}

/** Creates namespace `name` and waits for its default service account (pods need it at admission). */
export async function createNamespace(c: Clients, name: string): Promise<void> {
  await c.core.createNamespace({ body: { metadata: { name } } });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (
      await c.core.readNamespacedServiceAccount({ name: 'default', namespace: name }).then(
        () => true,
        () => false,
      )
    )
      return;
    if (Date.now() > deadline) throw new Error(`no default service account in ${name}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Deletes every pod of `ns` (grace 0 for kwok pods, default otherwise) and waits until none is left. */
export async function drainNamespace(c: Clients, ns: string, timeoutMs = 300_000): Promise<void> {
  await c.core.deleteCollectionNamespacedPod({ namespace: ns });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = (await c.core.listNamespacedPod({ namespace: ns })).items.length;
    if (left === 0) return;
    if (Date.now() > deadline) throw new Error(`${left} pods of ${ns} still there after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

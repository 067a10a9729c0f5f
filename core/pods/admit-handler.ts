/**
 * The admission extension point, like upstream's `PodAdmitHandler`s
 * (`kubelet.go` `AddPodAdmitHandlers([...])`): the composition root builds an
 * ordered list (device allocation, then the resource predicates; later DRA)
 * and the pod controller runs it for every new pod.
 *
 *   pod ──► handler[0] ─(admit)─► handler[1] ─(admit)─► ... ──► admitted
 *              │ rejected            │ rejected
 *              ▼                     ▼
 *           first rejection wins: the pod fails with its reason
 *           (a handler that throws rejects with UnexpectedAdmissionError)
 *
 * The context is read again before each handler, so a handler sees what an
 * earlier one changed (devices allocated at admission raise the allocatable
 * the predicates check, as upstream's predicate handler updates plugin
 * resources first).
 */
import type { V1Pod } from '@kubernetes/client-node';

/** The outcome of admission. */
export type AdmitResult = { admit: true } | { admit: false; reason: string; message: string };

/** What admission checks against. */
export interface AdmitContext {
  nodeName: string;
  nodeLabels: Record<string, string>;
  allocatable: Record<string, string>;
  /** Pods already admitted and not terminal. */
  admitted: V1Pod[];
}

/** One admission step; the first that rejects decides the pod's reason. */
export interface PodAdmitHandler {
  /** For logs: what this handler checks (`predicates`, `devices`). */
  readonly name: string;
  admit(pod: V1Pod, ctx: AdmitContext): Promise<AdmitResult> | AdmitResult;
}

/** A source of node allocatable for admission (node status, device plugins, later DRA); later sources win per resource. */
export interface AllocatableContributor {
  allocatable(): Readonly<Record<string, string>>;
}

/** The node facts admission reads: its name, labels and where its allocatable comes from. */
export interface AdmitNode {
  readonly nodeName: string;
  readonly nodeLabels: Record<string, string>;
  readonly allocatable: readonly AllocatableContributor[];
}

/** An allocatable that never changes (the node's own cpu/memory/pods). */
export function fixedAllocatable(allocatable: Readonly<Record<string, string>>): AllocatableContributor {
  return { allocatable: () => allocatable };
}

/** The admission context of `node` now, given the pods already admitted. */
export function admitContext(node: AdmitNode, admitted: V1Pod[]): AdmitContext {
  const allocatable: Record<string, string> = {};
  for (const c of node.allocatable) Object.assign(allocatable, c.allocatable());
  return { nodeName: node.nodeName, nodeLabels: node.nodeLabels, allocatable, admitted };
}

/** Runs `handlers` in order; the first rejection wins, a throw rejects with `UnexpectedAdmissionError`. */
export async function runAdmitHandlers(handlers: readonly PodAdmitHandler[], pod: V1Pod, ctx: () => AdmitContext): Promise<AdmitResult> {
  for (const h of handlers) {
    let r: AdmitResult;
    try {
      r = await h.admit(pod, ctx());
    } catch (e) {
      r = { admit: false, reason: 'UnexpectedAdmissionError', message: String((e as Error)?.message ?? e) };
    }
    if (!r.admit) return r;
  }
  return { admit: true };
}

/**
 * Pod admission like upstream's GeneralPredicates admit handler
 * (pkg/kubelet/lifecycle/predicate.go): resources (cpu, memory, pods,
 * extended), node name, and node selector / required node affinity.
 * Rejections carry upstream's reasons: OutOfcpu, OutOfmemory, OutOfpods,
 * OutOf<resource>, NodeAffinity, NodeName, UnexpectedAdmissionError.
 */
import type { V1Container, V1NodeSelectorRequirement, V1NodeSelectorTerm, V1Pod } from '@kubernetes/client-node';
import type { AdmitContext, AdmitResult, PodAdmitHandler } from './admit-handler.ts';
import { milliCpu, quantityUnits as parseQuantity } from '../kube/index.ts';
import { isSidecar } from './restart-rules.ts';

export type { AdmitContext, AdmitResult } from './admit-handler.ts';

function value(resource: string, q: string | undefined): number {
  return resource === 'cpu' ? milliCpu(q) : parseQuantity(q);
}

/**
 * The effective request of a pod for `resource`, plus overhead, like upstream's
 * resourcehelper.PodRequests: sidecars run beside everything after them, so
 * each init container needs its own request plus the sidecars before it, and
 * the app containers need theirs plus every sidecar's.
 */
export function podRequest(pod: V1Pod, resource: string): number {
  const req = (c: V1Container) => value(resource, c.resources?.requests?.[resource] ?? c.resources?.limits?.[resource]);
  const app = (pod.spec?.containers ?? []).reduce((s, c) => s + req(c), 0);
  let sidecars = 0;
  let init = 0;
  for (const c of pod.spec?.initContainers ?? []) {
    if (isSidecar(c)) sidecars += req(c);
    init = Math.max(init, isSidecar(c) ? sidecars : req(c) + sidecars);
  }
  return Math.max(app + sidecars, init) + value(resource, pod.spec?.overhead?.[resource]);
}

/** Extended resources (`example.com/x`, not `*kubernetes.io/*`) the node does not advertise are ignored, like upstream. */
const isExtended = (r: string) => r.includes('/') && !r.includes('kubernetes.io/') && !r.startsWith('requests.');

function requestedResources(pod: V1Pod, allocatable: Record<string, string>): string[] {
  const names = new Set<string>(['cpu', 'memory']);
  for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
    for (const k of Object.keys({ ...c.resources?.requests, ...c.resources?.limits })) names.add(k);
  }
  return [...names].filter((r) => !isExtended(r) || r in allocatable);
}

function fitResources(pod: V1Pod, ctx: AdmitContext): AdmitResult {
  const podCap = Number(ctx.allocatable.pods ?? '110');
  if (ctx.admitted.length + 1 > podCap) {
    return {
      admit: false,
      reason: 'OutOfpods',
      message: `Node didn't have enough resource: pods, requested: 1, used: ${ctx.admitted.length}, capacity: ${podCap}`,
    };
  }
  for (const r of requestedResources(pod, ctx.allocatable)) {
    const want = podRequest(pod, r);
    if (want === 0) continue;
    const cap = value(r, ctx.allocatable[r]);
    const used = ctx.admitted.reduce((s, p) => s + podRequest(p, r), 0);
    if (used + want > cap) {
      return { admit: false, reason: `OutOf${r}`, message: `Node didn't have enough resource: ${r}, requested: ${want}, used: ${used}, capacity: ${cap}` };
    }
  }
  return { admit: true };
}

/** Gt/Lt compare integers only (upstream strconv.ParseInt); anything else does not match. */
const isInt = (v: string | undefined): v is string => v !== undefined && /^[+-]?\d+$/.test(v);

function matchRequirement(r: V1NodeSelectorRequirement, labels: Record<string, string>): boolean {
  const v = labels[r.key];
  switch (r.operator) {
    case 'In':
      return v !== undefined && (r.values ?? []).includes(v);
    case 'NotIn':
      return v === undefined || !(r.values ?? []).includes(v);
    case 'Exists':
      return v !== undefined;
    case 'DoesNotExist':
      return v === undefined;
    case 'Gt':
      return isInt(v) && isInt(r.values?.[0]) && Number(v) > Number(r.values[0]);
    case 'Lt':
      return isInt(v) && isInt(r.values?.[0]) && Number(v) < Number(r.values[0]);
    default:
      return false;
  }
}

function matchTerm(t: V1NodeSelectorTerm, labels: Record<string, string>, nodeName: string): boolean {
  const exprs = t.matchExpressions ?? [];
  const fields = t.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  return (
    exprs.every((r) => matchRequirement(r, labels)) && fields.every((r) => r.key === 'metadata.name' && matchRequirement({ ...r, key: 'n' }, { n: nodeName }))
  );
}

function fitAffinity(pod: V1Pod, ctx: AdmitContext): boolean {
  const sel = pod.spec?.nodeSelector ?? {};
  if (Object.entries(sel).some(([k, v]) => ctx.nodeLabels[k] !== v)) return false;
  const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  return !terms || terms.some((t) => matchTerm(t, ctx.nodeLabels, ctx.nodeName));
}

/** Decides whether `pod` may run here: resources, then node affinity, then node name (upstream AdmissionCheck's order). */
export function admitPod(pod: V1Pod, ctx: AdmitContext): AdmitResult {
  const fit = fitResources(pod, ctx);
  if (!fit.admit) return fit;
  if (!fitAffinity(pod, ctx)) {
    return { admit: false, reason: 'NodeAffinity', message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector" };
  }
  if (pod.spec?.nodeName && pod.spec.nodeName !== ctx.nodeName) {
    return { admit: false, reason: 'NodeName', message: "Predicate NodeName failed: node(s) didn't match the requested node name" };
  }
  return fit;
}

/** {@link admitPod} as an admit handler (upstream's predicate admit handler). */
export const predicateAdmitHandler: PodAdmitHandler = { name: 'predicates', admit: admitPod };

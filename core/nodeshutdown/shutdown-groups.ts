/**
 * How graceful node shutdown splits its budget between pods, as upstream's
 * `nodeshutdown_manager_linux.go` (`migrateConfig`, `groupByPriority`): the
 * `shutdownGracePeriod` minus `shutdownGracePeriodCriticalPods` goes to pods with
 * priority below `system-cluster-critical` (2000000000), stopped first; the
 * critical budget goes to critical pods, stopped last. A pod whose own
 * `terminationGracePeriodSeconds` is shorter keeps it.
 */
import type { V1Pod } from '@kubernetes/client-node';

/** Upstream `scheduling.SystemCriticalPriority`: the priority of `system-cluster-critical`. */
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

/** The priorities of the two built-in PriorityClasses, for a pod whose `spec.priority` was not resolved (e.g. a static pod). */
const BUILT_IN_CLASSES: Record<string, number> = {
  'system-cluster-critical': SYSTEM_CRITICAL_PRIORITY,
  'system-node-critical': SYSTEM_CRITICAL_PRIORITY + 1000,
};

/** One priority band: pods with priority >= `priority` (up to the next band) get `graceMs` in total. */
export interface ShutdownGroup {
  priority: number;
  graceMs: number;
}

/** A band with the pods that fall in it. */
export interface PodGroup extends ShutdownGroup {
  pods: V1Pod[];
}

/**
 * The bands for a total and a critical budget (upstream `migrateConfig`): none when
 * the total is 0 or the critical part exceeds it (graceful shutdown is off), else
 * regular pods (priority 0 up) then critical pods.
 */
export function shutdownGroups(totalMs: number, criticalMs: number): ShutdownGroup[] {
  if (totalMs <= 0 || criticalMs > totalMs) return [];
  return [
    { priority: 0, graceMs: totalMs - criticalMs },
    { priority: SYSTEM_CRITICAL_PRIORITY, graceMs: criticalMs },
  ];
}

/** A pod's priority: `spec.priority` (set by the apiserver's Priority admission), else its built-in class's, else 0. */
export function podPriority(pod: V1Pod): number {
  return pod.spec?.priority ?? BUILT_IN_CLASSES[pod.spec?.priorityClassName ?? ''] ?? 0;
}

/**
 * Puts each pod in its band (upstream `groupByPriority`), bands in ascending
 * priority, i.e. in shutdown order: a pod above the highest band goes to the
 * highest, below the lowest to the lowest, between two to the lower one.
 */
export function groupPods(groups: readonly ShutdownGroup[], pods: readonly V1Pod[]): PodGroup[] {
  const out: PodGroup[] = [...groups].sort((a, b) => a.priority - b.priority).map((g) => ({ ...g, pods: [] }));
  if (!out.length) return out;
  for (const pod of pods) {
    const p = podPriority(pod);
    let i = out.findIndex((g) => g.priority >= p);
    if (i === -1) i = out.length - 1;
    else if (i > 0 && out[i]!.priority > p) i--;
    out[i]!.pods.push(pod);
  }
  return out;
}

/** The grace a pod gets in its band: the band's, or the pod's own `terminationGracePeriodSeconds` when that is shorter. */
export function podShutdownGraceMs(pod: V1Pod, groupMs: number): number {
  const own = pod.spec?.terminationGracePeriodSeconds;
  return own !== undefined && own !== null && own * 1000 <= groupMs ? Math.max(0, own * 1000) : groupMs;
}

/**
 * The resize part of a pod's status, as upstream's kubelet writes it
 * (`kubelet_pods.go` `convertToAPIContainerStatuses` and `generateAPIPodStatus`):
 *
 *   - `containerStatuses[].resources` of each container that has run (a container ID): what it
 *     is allocated, with the cpu and memory requests and limits its current run really has
 *     (the actuated ones) when it runs — the apiserver accepts a resize
 *     (`kubectl patch --subresource resize`) only for pods whose running containers report it;
 *   - `containerStatuses[].allocatedResources`: the requests allocated to it;
 *   - the `PodResizePending` / `PodResizeInProgress` conditions of resize-conditions.ts, and a
 *     strategic-merge `$patch: delete` for one the server's copy shows that no longer holds
 *     (the status is posted as a strategic merge patch, where a condition left out stays).
 *
 * Pods of a provider that owns whole pods report no resources: core does not run their
 * containers (the apiserver then refuses to resize them while they run).
 */
import type { V1ContainerStatus, V1Pod, V1PodCondition, V1PodStatus, V1ResourceRequirements } from '@kubernetes/client-node';
import { goRequirements } from './resources.ts';
import { IN_PROGRESS, PENDING, type ResizeCondition } from './resize-conditions.ts';

/** Inputs of {@link resizeStatus}. */
export interface ResizeStatusInput {
  pod: V1Pod;
  status: V1PodStatus;
  /** `pod` with its allocation laid over its spec. */
  allocated: V1Pod;
  /** The pod's current resize conditions. */
  conditions: readonly ResizeCondition[];
  /** Report `resources`/`allocatedResources` (core runs the pod's containers). */
  reportResources: boolean;
  /** What container `name`'s run has, when recorded. */
  actuated(name: string): V1ResourceRequirements | undefined;
}

/**
 * What a running container reports (upstream `convertContainerStatusResources`): the allocated
 * resources with the cpu and memory values of each list replaced by those of its run; a value
 * its run does not have is left out.
 */
export function runningResources(allocated: V1ResourceRequirements | undefined, actual: V1ResourceRequirements | undefined): V1ResourceRequirements {
  const out = goRequirements(allocated);
  if (!actual) return out;
  for (const list of ['limits', 'requests'] as const) {
    const l = out[list];
    if (!l) continue;
    for (const r of ['cpu', 'memory']) {
      const v = actual[list]?.[r];
      if (v !== undefined) l[r] = v;
      else delete l[r];
    }
    if (Object.keys(l).length === 0) delete out[list];
  }
  return out;
}

/** `status` with the resize part (see the file's comment). */
export function resizeStatus(i: ResizeStatusInput): V1PodStatus {
  const { status } = i;
  const withResources = (list: V1ContainerStatus[] | undefined, init: boolean): V1ContainerStatus[] | undefined =>
    list?.map((cs) => {
      const spec = (init ? i.allocated.spec?.initContainers : i.allocated.spec?.containers)?.find((c) => c.name === cs.name);
      if (!spec || !cs.containerID) return cs;
      const requests = goRequirements(spec.resources).requests;
      const resources = cs.state?.running ? runningResources(spec.resources, i.actuated(cs.name)) : goRequirements(spec.resources);
      const out: V1ContainerStatus = { ...cs, resources };
      if (requests) out.allocatedResources = requests;
      return out;
    });
  const conditions: V1PodCondition[] = (status.conditions ?? []).filter((c) => c.type !== PENDING && c.type !== IN_PROGRESS);
  for (const c of i.conditions) conditions.push({ ...c });
  for (const type of [PENDING, IN_PROGRESS]) {
    const shown = i.pod.status?.conditions?.some((c) => c.type === type && !(c as { $patch?: string }).$patch);
    if (shown && !i.conditions.some((c) => c.type === type)) conditions.push({ type, $patch: 'delete' } as unknown as V1PodCondition);
  }
  const out: V1PodStatus = status.conditions || conditions.length ? { ...status, conditions } : { ...status };
  if (i.reportResources) {
    out.containerStatuses = withResources(status.containerStatuses, false);
    if (status.initContainerStatuses) out.initContainerStatuses = withResources(status.initContainerStatuses, true);
  }
  return out;
}

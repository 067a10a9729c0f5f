/**
 * The resize admit handler (upstream `allocation/handlers.go` `podResizesAdmitHandler`): run
 * first when a resize is decided, it says which resizes nodelet can never actuate —
 * `Infeasible`, as upstream's does for swap or a static CPU manager:
 *
 *   - a pod of a provider that owns whole pods (`PodProvider`): core does not run its
 *     containers, so it cannot change them;
 *   - a change of a container's limits (cpu or memory) whose `resizePolicy` is `NotRequired`
 *     (the default) on a provider without the `resizeContainer` capability. With
 *     `RestartContainer` the container is restarted with the new resources, which every
 *     provider can do;
 *   - requests above the node's allocatable, which no freed room can ever hold: the check of
 *     the apiserver's PodResizeValidator admission plugin (with its message), which a cluster
 *     with WASI nodes runs without (docs/resize.md).
 *
 * Other handlers (resources, node shutdown, eviction) follow; their rejections make the
 * resize `Deferred`.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { isPodProvider, type AnyProvider } from '@nodelet/plugin-api/v1';
import type { AdmitContext, AdmitResult, PodAdmitHandler } from '../pods/index.ts';
import { milliCpu, quantityUnits } from '../kube/index.ts';
import { containersOf, podRequests } from './resources.ts';

/** What the handler needs: the provider a pod runs on, and the pod as allocated now. */
export interface ResizeAdmitDeps {
  providerOf(pod: V1Pod): AnyProvider | undefined;
  allocatedPod(pod: V1Pod): V1Pod;
}

/** The reason upstream gives a resize that can never be actuated (core/v1 `PodReasonInfeasible`). */
const INFEASIBLE = 'Infeasible';

/** Builds the handler (see the file's comment). */
export function resizeAdmitHandler(d: ResizeAdmitDeps): PodAdmitHandler {
  return {
    name: 'resize',
    admit(pod: V1Pod, ctx: AdmitContext): AdmitResult {
      const beyond = beyondAllocatable(pod, ctx.allocatable);
      if (beyond) return { admit: false, reason: INFEASIBLE, message: beyond };
      const provider = d.providerOf(pod);
      if (!provider) return { admit: true };
      if (isPodProvider(provider)) {
        return { admit: false, reason: INFEASIBLE, message: `In-place resize is not supported by provider "${provider.name}": it runs whole pods` };
      }
      if (typeof provider.resizeContainer === 'function') return { admit: true };
      const allocated = d.allocatedPod(pod);
      for (const { c, init } of containersOf(pod)) {
        const before = containersOf(allocated).find((x) => x.c.name === c.name && x.init === init)?.c;
        if (!before) continue;
        for (const r of ['cpu', 'memory'] as const) {
          const value = r === 'cpu' ? milliCpu : quantityUnits;
          if (value(c.resources?.limits?.[r]) === value(before.resources?.limits?.[r])) continue;
          const policy = c.resizePolicy?.find((p) => p.resourceName === r)?.restartPolicy ?? 'NotRequired';
          if (policy === 'RestartContainer') continue;
          return {
            admit: false,
            reason: INFEASIBLE,
            message: `In-place resize of containers is not supported by provider "${provider.name}": set resizePolicy RestartContainer for ${r} to restart container ${c.name} with the new resources`,
          };
        }
      }
      return { admit: true };
    },
  };
}

/** The apiserver's `validateRequestsWithinAllocatable` (plugin/pkg/admission/podresize): its message, or undefined when the requests fit. */
function beyondAllocatable(pod: V1Pod, allocatable: Readonly<Record<string, string>>): string | undefined {
  const want = podRequests(pod);
  const cpu = milliCpu(allocatable.cpu ?? '0');
  const memory = quantityUnits(allocatable.memory ?? '0');
  const msg: string[] = [];
  if (want.cpu > cpu) msg.push(`cpu, requested: ${want.cpu}, allocatable: ${cpu}`);
  if (want.memory > memory) msg.push(`memory, requested: ${want.memory}, allocatable: ${memory}`);
  return msg.length ? `node didn't have enough allocatable resources: ${msg.join('; ')}` : undefined;
}

/**
 * Standalone mode's status sink: statuses live in the pod objects in memory
 * (served by the kubelet API's /pods) and phase changes are logged.
 */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import type { StatusSink } from '../pod-controller.ts';

/** A sink that logs phase and container state changes. */
export function memoryStatusSink(log: Logger): StatusSink {
  const last = new Map<string, string>();
  return {
    async patchStatus(pod: V1Pod, status: V1PodStatus) {
      const key = `${pod.metadata!.namespace}/${pod.metadata!.name}`;
      const states = (status.containerStatuses ?? [])
        .map((c) => `${c.name}=${Object.keys(c.state ?? {})[0] ?? '?'}${c.state?.terminated ? `(${c.state.terminated.exitCode})` : ''}`)
        .join(',');
      const summary = `${status.phase} ${states}`;
      if (last.get(key) !== summary) log.info({ pod: key, phase: status.phase, containers: states, reason: status.reason }, `pod ${key} is ${status.phase}`);
      last.set(key, summary);
    },
    async deletePod() {
      /* static pods are not API objects */
    },
  };
}

/**
 * The pod as a `PodProvider` receives it: the plugin API's `PodObject` (the
 * fields providers usually read, plus `raw`, the full core/v1 Pod).
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { PodContainerSpec, PodObject } from '@nodelet/plugin-api/v1';

const container = (c: V1Container): PodContainerSpec => ({
  name: c.name,
  image: c.image,
  command: c.command,
  args: c.args,
  workingDir: c.workingDir,
});

/** Converts a core/v1 Pod into the plugin API's {@link PodObject}. */
export function toPodObject(pod: V1Pod): PodObject {
  const m = pod.metadata!;
  const spec = pod.spec!;
  return {
    metadata: { namespace: m.namespace!, name: m.name!, uid: m.uid!, labels: m.labels, annotations: m.annotations },
    spec: {
      containers: spec.containers.map(container),
      initContainers: spec.initContainers?.map(container),
      restartPolicy: spec.restartPolicy as PodObject['spec']['restartPolicy'],
      runtimeClassName: spec.runtimeClassName,
    },
    raw: pod,
  };
}

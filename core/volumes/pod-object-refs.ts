/**
 * The ConfigMaps and Secrets a pod refers to, as upstream's
 * `podutil.VisitPodConfigmapNames` / `VisitPodSecretNames` collect them for the
 * kubelet's ConfigMap and Secret managers: volumes (configMap, secret, projected
 * sources, CSI `nodePublishSecretRef`), env `valueFrom` and `envFrom` of every
 * container kind, and `imagePullSecrets` (Secrets).
 */
import type { V1Container, V1EnvFromSource, V1EnvVar, V1Pod } from '@kubernetes/client-node';

/** Names (in the pod's namespace) of the ConfigMaps and Secrets a pod refers to. */
export interface PodObjectRefs {
  readonly configMaps: ReadonlySet<string>;
  readonly secrets: ReadonlySet<string>;
}

type AnyContainer = Pick<V1Container, 'env' | 'envFrom'>;

/** The ConfigMaps and Secrets `pod` refers to (names only; all in its namespace). */
export function podObjectRefs(pod: V1Pod): PodObjectRefs {
  const configMaps = new Set<string>();
  const secrets = new Set<string>();
  const add = (set: Set<string>, name: string | undefined) => {
    if (name) set.add(name);
  };
  const spec = pod.spec;
  for (const s of spec?.imagePullSecrets ?? []) add(secrets, s.name);
  for (const v of spec?.volumes ?? []) {
    add(configMaps, v.configMap?.name);
    add(secrets, v.secret?.secretName);
    add(secrets, v.csi?.nodePublishSecretRef?.name);
    for (const p of v.projected?.sources ?? []) {
      add(configMaps, p.configMap?.name);
      add(secrets, p.secret?.name);
    }
  }
  const containers: AnyContainer[] = [...(spec?.initContainers ?? []), ...(spec?.containers ?? []), ...((spec?.ephemeralContainers ?? []) as AnyContainer[])];
  for (const c of containers) {
    for (const e of (c.env ?? []) as V1EnvVar[]) {
      add(configMaps, e.valueFrom?.configMapKeyRef?.name);
      add(secrets, e.valueFrom?.secretKeyRef?.name);
    }
    for (const e of (c.envFrom ?? []) as V1EnvFromSource[]) {
      add(configMaps, e.configMapRef?.name);
      add(secrets, e.secretRef?.name);
    }
  }
  return { configMaps, secrets };
}

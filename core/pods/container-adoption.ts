/**
 * Containers that outlive nodelet (a provider with `keepsContainers`, e.g. the
 * `wasi` provider's external runtime): at start, the runs that a pod's API
 * status still names as running are re-adopted by its container driver
 * (container-resume.ts, `ContainerDriver.adopt`); every other container the
 * provider lists belongs to no pod any more (deleted while nodelet was away,
 * a static pod, a status never posted) and is released — stopped and
 * forgotten — as upstream's kubelet kills the containers of pods it does not
 * know.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { isPodProvider, type AnyProvider, type Logger } from '@nodelet/plugin-api/v1';

/** The container IDs (without the `<scheme>://`) that `pods`' statuses name as running. */
export function claimedContainerIds(pods: readonly V1Pod[]): Set<string> {
  const ids = new Set<string>();
  for (const p of pods) {
    for (const s of [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])]) {
      if (s.state?.running && s.containerID) ids.add(s.containerID.replace(/^[^:]*:\/\//, ''));
    }
  }
  return ids;
}

/**
 * Releases every container of `providers` that no pod of `pods` claims; the
 * claimed ones are left for their pods to re-adopt. Resolves with the number
 * released; never rejects (a provider that cannot list is logged).
 */
export async function releaseUnclaimedContainers(providers: readonly AnyProvider[], pods: readonly V1Pod[], log: Logger): Promise<number> {
  const claimed = claimedContainerIds(pods);
  let released = 0;
  for (const p of providers) {
    if (isPodProvider(p) || !p.listContainers || !p.releaseContainer) continue;
    try {
      const known = await p.listContainers();
      const adoptable = known.filter((c) => claimed.has(c.id)).length;
      for (const c of known) {
        if (claimed.has(c.id)) continue;
        await p.releaseContainer(c.id);
        released++;
        log.info({ provider: p.name, id: c.id, pod: `${c.pod.namespace}/${c.pod.name}`, container: c.name }, 'released a container no pod claims');
      }
      log.info({ provider: p.name, adoptable, released }, 'containers kept by the provider across the restart');
    } catch (e) {
      log.warn({ provider: p.name, err: (e as Error).message }, 'could not list the containers the provider kept');
    }
  }
  return released;
}

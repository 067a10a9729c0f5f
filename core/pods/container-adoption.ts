/**
 * Containers that outlive nodelet (a provider with `keepsContainers`, e.g. the
 * `wasi` provider's external runtime): at start, the runs that a pod's API
 * status still names as running are re-adopted by its container driver
 * (container-resume.ts, `ContainerDriver.adopt`). Static pods have no API
 * status to read back: their kept containers are found by pod UID (a hash of
 * the manifest file's path and text, so it is the same while the manifest is
 * unchanged, as upstream's config hash) and container name, and written on the
 * static pod's object as the status a read-back would give (see
 * {@link staticPodStatuses}). Every other container the provider lists belongs
 * to no pod any more (deleted while nodelet was away, a changed manifest, a
 * status never posted) and is released — stopped and forgotten — as upstream's
 * kubelet kills the containers of pods it does not know.
 */
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { isPodProvider, type AdoptableContainer, type AnyProvider, type Logger } from '@nodelet/plugin-api/v1';

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
 * Gives each static pod of `staticPods` the container statuses of its runs
 * that provider `providerName` kept (same pod UID and container name; the
 * latest run of each container): a running one as `running` with its
 * container ID and restart count, so that the pod's driver re-adopts it; one
 * that ended while nodelet was away as `terminated` with its exit, so that the
 * restart policy decides. Sets `status.containerStatuses` and
 * `status.initContainerStatuses` on the pod objects (they have no status yet).
 */
export function staticPodStatuses(staticPods: readonly V1Pod[], providerName: string, kept: readonly AdoptableContainer[]): void {
  for (const pod of staticPods) {
    const uid = pod.metadata?.uid;
    const runs = kept.filter((c) => c.pod.uid === uid).sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime());
    if (!uid || runs.length === 0) continue;
    const latest = new Map(runs.map((c) => [c.name, c]));
    const statuses = (names: readonly string[]): V1ContainerStatus[] =>
      names.flatMap((name) => {
        const c = latest.get(name);
        if (!c) return [];
        const containerID = `${providerName}://${c.id}`;
        const state = c.exit
          ? {
              terminated: {
                exitCode: c.exit.exitCode,
                reason: c.exit.reason,
                message: c.exit.message,
                startedAt: c.startedAt,
                finishedAt: c.exit.finishedAt,
                containerID,
              },
            }
          : { running: { startedAt: c.startedAt } };
        return [{ name, image: '', imageID: '', ready: false, restartCount: c.restartCount ?? 0, containerID, state }];
      });
    const init = statuses((pod.spec?.initContainers ?? []).map((c) => c.name));
    const app = statuses((pod.spec?.containers ?? []).map((c) => c.name));
    pod.status = { ...pod.status, ...(init.length ? { initContainerStatuses: init } : {}), ...(app.length ? { containerStatuses: app } : {}) };
  }
}

/**
 * Releases every container of `providers` that no pod of `pods` claims; the
 * claimed ones are left for their pods to re-adopt. `staticPods` (not yet
 * started) first get the statuses of their kept containers
 * ({@link staticPodStatuses}) and claim the running ones. Resolves with the
 * number released; never rejects (a provider that cannot list is logged).
 */
export async function releaseUnclaimedContainers(
  providers: readonly AnyProvider[],
  pods: readonly V1Pod[],
  log: Logger,
  staticPods: readonly V1Pod[] = [],
): Promise<number> {
  let released = 0;
  for (const p of providers) {
    if (isPodProvider(p) || !p.listContainers || !p.releaseContainer) continue;
    try {
      const known = await p.listContainers();
      staticPodStatuses(staticPods, p.name, known);
      const claimed = claimedContainerIds([...pods, ...staticPods]);
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

/**
 * Pods a `PodProvider` still runs after a nodelet restart (its pods outlive
 * nodelet's process) but that are no longer bound to this node — deleted, or
 * moved, while nodelet was away. At start, core asks each pod provider that
 * implements `getPods` for them and deletes (`deletePod`, grace 0) every pod
 * that neither the API's pods of this node nor the static pods name, as
 * virtual-kubelet's `deleteDanglingPods` does. The pods still claimed are left
 * to their sync (`createPod` again, which a provider that keeps pods treats as
 * "already running").
 */
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { isPodProvider, providerError, type AnyProvider, type Logger, type PodLifecycleContext, type PodObject } from '@nodelet/plugin-api/v1';

/** A pod UID as the API server makes them; a provider's answer is checked before it names a directory. */
const UID = /^[0-9a-f-]{36}$/;

/**
 * Deletes the pods of `providers` that no pod of `pods` claims (by UID). Resolves with
 * the number deleted; never rejects (a provider that cannot list or delete is logged).
 * `podsDir` is `<root-dir>/pods`, where a dangling pod's directory was.
 */
export async function deleteDanglingPods(providers: readonly AnyProvider[], pods: readonly V1Pod[], podsDir: string, log: Logger): Promise<number> {
  const claimed = new Set(pods.flatMap((p) => (p.metadata?.uid ? [p.metadata.uid] : [])));
  let deleted = 0;
  for (const p of providers) {
    if (!isPodProvider(p) || !p.pods.getPods) continue;
    let running: readonly PodObject[];
    try {
      running = await p.pods.getPods();
    } catch (e) {
      log.warn({ provider: p.name, err: (e as Error).message }, 'could not list the pods the provider kept');
      continue;
    }
    for (const pod of running) {
      const ref = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
      if (typeof pod.metadata?.uid !== 'string' || !UID.test(pod.metadata.uid)) {
        log.warn({ provider: p.name, pod: ref, uid: pod.metadata?.uid }, 'getPods listed a pod without a valid UID: ignored');
        continue;
      }
      if (claimed.has(pod.metadata.uid)) continue;
      try {
        await p.pods.deletePod(pod, danglingContext(pod, join(podsDir, pod.metadata.uid), log.child({ pod: ref })), 0);
        deleted++;
        log.info({ provider: p.name, pod: ref, uid: pod.metadata.uid }, 'deleted a pod no longer bound to this node');
      } catch (e) {
        log.warn({ provider: p.name, pod: ref, err: (e as Error).message }, 'could not delete a pod no longer bound to this node');
      }
    }
  }
  return deleted;
}

/** The context of a pod being deleted without an API object: its events go to the log, nothing can be resolved. */
function danglingContext(pod: PodObject, podDir: string, log: Logger): PodLifecycleContext {
  const gone = () => providerError('NotFound', `pod ${pod.metadata.namespace}/${pod.metadata.name} is no longer bound to this node`);
  return {
    log,
    event: (type, reason, message) => log.info({ type, reason }, message),
    signal: new AbortController().signal,
    podDir,
    resolveContainer: () => Promise.reject(gone()),
    logPath: () => {
      throw gone();
    },
    statusChanged: () => undefined,
  };
}

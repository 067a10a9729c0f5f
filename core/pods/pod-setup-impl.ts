/**
 * The real {@link PodSetup}: volumes from the root's volume plugins, env and
 * argv from core/pods, then the root's container-option contributors (their
 * env under the container's own, their mounts after the volume mounts, their
 * warnings as events); logs under `<rootDir>/logs/pods`, pod dirs under
 * `<rootDir>/pods/<uid>`. ConfigMaps, Secrets and tokens come from the API
 * (standalone mode has none): ConfigMaps and Secrets through one watch per
 * referenced object, registered when a pod's volumes are prepared and released
 * at its tear-down.
 */
import { mkdirSync } from 'node:fs';
import { readdir, realpath } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger, RegistryCredential } from '@nodelet/plugin-api/v1';
import type { NodeletOptions } from '../config/index.ts';
import type { KubeClients } from '../kube/index.ts';
import type { Events } from '../events/index.ts';
import { containerLogPath, podLogDir } from '../logs/index.ts';
import { dirMaker, type DirMaker } from '../exec/index.ts';
import {
  apiObjectWatch,
  createApiObjectSource,
  WatchingObjectSource,
  failedMountMessage,
  podTokenRequests,
  prepareVolumes,
  teardownVolumes,
  volumeFailures,
  withTokenCache,
  type ObjectSource,
  type PodCertificates,
  type VolumePluginRegistry,
} from '../volumes/index.ts';
import { contributedEnv, contributedMounts, type ContainerOptionsContributor } from './container-options.ts';
import { resolveEnv } from './env.ts';
import { resolveMounts } from './mounts.ts';
import { resolveArgv } from './argv.ts';
import type { PodSetup } from './pod-setup.ts';
import type { PodResourcePreparer } from './pod-resources.ts';
import { pullSecretCredentials } from '../images/index.ts';
import { removeTreeNoFollow } from '../paths/index.ts';
import { errorDetail, isNodeletError, nodeletError } from '../errors/index.ts';

/** The object source of standalone mode: nothing exists. */
const noApi: ObjectSource = {
  getConfigMap: async () => undefined,
  getSecret: async () => undefined,
  requestServiceAccountToken: async () => {
    throw nodeletError('NDL_VOLUME_SOURCE', 'service account tokens need an API server (standalone mode has none)');
  },
};

const UID = /^[0-9a-f-]{36}$/;

/** The pod's IPs as the pod worker set them (`status.podIPs`). */
const podIPsOf = (pod: V1Pod): string[] => (pod.status?.podIPs ?? []).flatMap((a) => (a.ip ? [a.ip] : []));

/** The extension points pod set-up applies (built by the composition root). */
export interface PodSetupExtensions {
  /** The node's volume plugins (set-up and tear-down). */
  readonly volumePlugins: VolumePluginRegistry;
  /** Env and mounts added to every container, in order. */
  readonly containerOptions: readonly ContainerOptionsContributor[];
  /** Where contributors' warnings go (`Warning` events on the container). */
  readonly events: Events;
  /** Pod-level resources prepared before the volumes, in order (DRA claims). */
  readonly podResources?: readonly PodResourcePreparer[];
  /** Makes the pod's own dirs (default: through libuv's pool; the composition root gives the Perl helper's, core/exec). */
  readonly dirs?: DirMaker;
  /** The credential bundles of `podCertificate` projected sources (cluster mode): issued ones re-sync the pod's volumes. */
  readonly podCertificates?: PodCertificates;
}

/** Builds the pod setup for this node. */
export function createPodSetup(
  o: NodeletOptions,
  clients: KubeClients | undefined,
  hostIP: string,
  log: Logger,
  ext: PodSetupExtensions,
): PodSetup & { cleanupOrphans(known: (uid: string) => boolean): Promise<void>; onObjectsChanged(fn: (podUids: string[]) => void): void; stop(): void } {
  const plugins = ext.volumePlugins;
  // ConfigMaps/Secrets: one watch per referenced object, ref-counted by pods (upstream's default Watch strategy).
  const watching = clients
    ? new WatchingObjectSource(withTokenCache(createApiObjectSource(clients.core)), apiObjectWatch(clients, log.child({ component: 'object-watch' })), log)
    : undefined;
  const source: ObjectSource = watching ?? noApi;
  const podDir = (pod: V1Pod) => {
    const uid = pod.metadata!.uid!;
    if (!UID.test(uid)) throw nodeletError('NDL_POD_INVALID', `invalid pod uid ${JSON.stringify(uid)}`);
    return join(o.podsDir, uid);
  };
  const identity = (pod: V1Pod) => ({ namespace: pod.metadata!.namespace!, name: pod.metadata!.name!, uid: pod.metadata!.uid! });
  /** Container log directories made when the pod was prepared, by pod uid. */
  const logDirs = new Map<string, Set<string>>();
  const dirs = ext.dirs ?? dirMaker(undefined);
  /** The pod's own dirs (`pods/<uid>`, a log dir per container), in one call to the dir maker (one round trip, off the main thread). */
  const makePodDirs = async (pod: V1Pod, dir: string) => {
    const made = logDirs.get(pod.metadata!.uid!) ?? new Set<string>();
    const wanted = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]
      .map((c) => dirname(containerLogPath(o.rootDir, identity(pod), c.name, 0)))
      .filter((d) => !made.has(d));
    await dirs.make([dir, ...new Set(wanted)], 0o750);
    for (const d of wanted) made.add(d);
    logDirs.set(pod.metadata!.uid!, made);
  };
  /** The pods dir's real path, read once (when the first container's mounts are resolved: prepare() made the dir). */
  let realPods: Promise<{ dir: string; real: string } | undefined> | undefined;
  const realPodsDir = () =>
    (realPods ??= realpath(o.podsDir).then(
      (real) => ({ dir: o.podsDir, real }),
      () => (realPods = undefined),
    ));
  return {
    podDir,
    async prepare(pod) {
      const dir = podDir(pod);
      watching?.registerPod(pod);
      // Tokens first: the longest step of a projected volume needs neither the pod's dirs nor its mounts.
      if (clients) for (const r of podTokenRequests(pod)) source.requestServiceAccountToken(r.namespace, r.serviceAccount, r.opts).catch(() => undefined);
      await makePodDirs(pod, dir);
      for (const r of ext.podResources ?? []) {
        try {
          await r.prepare(pod);
        } catch (e) {
          const err = isNodeletError(e) ? nodeletError(e.code, e.detail) : nodeletError('NDL_CONTAINER_CONFIG', errorDetail(e), e);
          throw Object.assign(err, { reason: r.failureReason, messages: [`${r.failurePrefix}: ${err.detail}`] });
        }
      }
      try {
        return await prepareVolumes(pod, {
          podDir: dir,
          source,
          podCertificates: ext.podCertificates,
          nodeName: o.nodeName,
          hostIP,
          podIPs: podIPsOf(pod),
          log,
          plugins,
        });
      } catch (e) {
        const fails = volumeFailures(e);
        // Re-made (not re-thrown) so the pod worker sees only the FailedMount texts, not the aggregate's inner errors.
        const err = isNodeletError(e) ? nodeletError(e.code, e.detail) : nodeletError('NDL_VOLUME_SOURCE', errorDetail(e), e);
        throw Object.assign(err, { messages: fails?.map(failedMountMessage) });
      }
    },
    async mounts(pod, container, prepared, env) {
      const own = await resolveMounts(pod, container, prepared, env, { pods: await realPodsDir() });
      const m = pod.metadata!;
      const regarding = { kind: 'Pod', namespace: m.namespace!, name: m.name!, uid: m.uid!, fieldPath: `spec.containers{${container.name}}` };
      return contributedMounts(ext.containerOptions, pod, container, podDir(pod), own, (w) => ext.events.emit(regarding, 'Warning', w.reason, w.message));
    },
    env: (pod, container) =>
      contributedEnv(ext.containerOptions, pod, container, () => resolveEnv(pod, container, { source, nodeName: o.nodeName, hostIP, podIPs: podIPsOf(pod) })),
    argv: (container, env) => resolveArgv(container, env),
    logPath(pod, container, restartCount) {
      const p = containerLogPath(o.rootDir, identity(pod), container, restartCount);
      // Made by prepare(); here only for a container prepare did not know.
      if (!logDirs.get(pod.metadata!.uid!)?.has(dirname(p))) mkdirSync(dirname(p), { recursive: true, mode: 0o750 });
      return p;
    },
    credentials: (pod): Promise<RegistryCredential[]> => pullSecretCredentials(pod, source),
    objectsChangedSince: (pod, since) =>
      (watching?.changedSince(pod, since) ?? false) || (ext.podCertificates?.changedSince(pod.metadata!.uid!, since) ?? false),
    onObjectsChanged(fn) {
      watching?.onChange(fn);
      ext.podCertificates?.onChange(fn);
    },
    stop: () => watching?.stop(),
    async teardown(pod) {
      const dir = podDir(pod);
      watching?.unregisterPod(pod.metadata!.uid!);
      logDirs.delete(pod.metadata!.uid!);
      await teardownVolumes(dir, { log, plugins });
      for (const r of ext.podResources ?? []) await r.release(pod);
      await removeTreeNoFollow(dir);
      source.forgetPod?.(pod.metadata!.uid!);
      ext.podCertificates?.forgetPod(pod.metadata!.uid!);
      // The pod is being deleted and its containers are stopped: its logs go with it, as
      // upstream's container GC removes the log directories of deleted pods.
      await removeTreeNoFollow(podLogDir(o.rootDir, identity(pod)));
    },
    async unmountVolumes(pod) {
      await teardownVolumes(podDir(pod), { log, plugins });
    },
    // `known` is asked for each directory when it is reached: a pod the watch delivered after the
    // first list (its sync already making its directory) is not an orphan.
    async cleanupOrphans(known) {
      for (const uid of await readdir(o.podsDir).catch(() => [] as string[])) {
        if (known(uid) || !UID.test(uid)) continue;
        log.info({ uid }, 'removing the directory of a pod deleted while nodelet was down');
        const dir = join(o.podsDir, uid);
        try {
          await teardownVolumes(dir, { log, plugins });
        } catch (e) {
          // A volume that could not be unmounted keeps its pod dir: removing it would delete the volume's data.
          log.warn({ uid, err: String(e) }, 'volume teardown of an orphaned pod failed; keeping its directory');
          continue;
        }
        await removeTreeNoFollow(dir);
      }
    },
    async releaseResources(pod) {
      for (const r of ext.podResources ?? []) await r.release(pod);
    },
  };
}

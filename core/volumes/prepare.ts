/**
 * Setting up and tearing down a pod's volumes.
 *
 *   prepareVolumes(pod) ── for each spec volume, independently ──▶ plugin.setUp
 *        │ all ok  → Map<name, PreparedVolume>
 *        └ some fail → throws one NodeletError carrying `failures[]`, one per
 *                      volume (the lead emits one `FailedMount` event each:
 *                      `MountVolume.SetUp failed for volume "x" : <message>`)
 *
 * Set-up is idempotent: call it again to re-sync configMap/secret/token
 * contents (see `PreparedVolume.refreshAt`).
 */
import { lstat, readdir, rmdir } from 'node:fs/promises';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import { isNodeletError, nodeletError, type ErrorCode, type NodeletError } from '../errors/index.ts';
import { removeTreeNoFollow } from '../paths/index.ts';
import type { ObjectSource } from './object-source.ts';
import type { PodCertificateSource } from './pod-certificate-source.ts';
import type { VolumePluginRegistry } from './plugin-registry.ts';
import type { PreparedVolume, VolumeContext } from './types.ts';

/** Options of {@link prepareVolumes}. */
export interface PrepareVolumesOptions {
  readonly podDir: string;
  readonly source: ObjectSource;
  /** The credential bundles of `podCertificate` projected sources (cluster mode). */
  readonly podCertificates?: PodCertificateSource;
  readonly nodeName: string;
  readonly hostIP: string;
  readonly hostIPs?: readonly string[];
  readonly podIPs?: readonly string[];
  /** Node allocatable, for downward API `resourceFieldRef` of containers without limits. */
  readonly nodeAllocatable?: Readonly<Record<string, string>>;
  readonly log: Logger;
  /** The node's volume plugins (built by the composition root). */
  readonly plugins: VolumePluginRegistry;
}

/** One volume that failed to set up; `message` is upstream-style (`configmap "x" not found`). */
export interface VolumeFailure {
  readonly volume: string;
  readonly message: string;
  readonly error: unknown;
}

/** The error {@link prepareVolumes} throws: a NodeletError with every failure. */
export interface VolumeSetUpError extends NodeletError {
  readonly failures: readonly VolumeFailure[];
}

/** The per-volume failures of an error thrown by {@link prepareVolumes}, if it is one. */
export function volumeFailures(e: unknown): readonly VolumeFailure[] | undefined {
  return isNodeletError(e) && Array.isArray((e as Partial<VolumeSetUpError>).failures) ? (e as VolumeSetUpError).failures : undefined;
}

/** The upstream `FailedMount` event message for a failure. */
export function failedMountMessage(f: VolumeFailure): string {
  return `MountVolume.SetUp failed for volume ${JSON.stringify(f.volume)} : ${f.message}`;
}

/**
 * Sets up every volume of `pod` (in parallel, each independently) and returns
 * them by name. Throws a {@link VolumeSetUpError} when any fails; the code is
 * that of the first failure (`NDL_VOLUME_SOURCE`, `NDL_PATH_ESCAPE`,
 * `NDL_VOLUME_UNSUPPORTED`, ...).
 */
export async function prepareVolumes(pod: V1Pod, opts: PrepareVolumesOptions): Promise<Map<string, PreparedVolume>> {
  const plugins = opts.plugins;
  const volumes = pod.spec?.volumes ?? [];
  const seen = new Set<string>();
  for (const v of volumes) {
    if (seen.has(v.name)) throw nodeletError('NDL_POD_INVALID', `duplicate volume name ${JSON.stringify(v.name)}`);
    seen.add(v.name);
  }
  const ctx: VolumeContext = {
    pod,
    podDir: opts.podDir,
    source: opts.source,
    ...(opts.podCertificates ? { podCertificates: opts.podCertificates } : {}),
    nodeName: opts.nodeName,
    hostIP: opts.hostIP,
    hostIPs: opts.hostIPs && opts.hostIPs.length > 0 ? opts.hostIPs : [opts.hostIP],
    podIPs: opts.podIPs ?? [],
    nodeAllocatable: opts.nodeAllocatable ?? {},
    log: opts.log,
  };
  const results = await Promise.allSettled(volumes.map(async (v) => plugins.find(v).setUp(v, ctx)));
  const out = new Map<string, PreparedVolume>();
  const failures: VolumeFailure[] = [];
  results.forEach((r, i) => {
    const volume = volumes[i]!.name;
    if (r.status === 'fulfilled') out.set(volume, r.value);
    else failures.push({ volume, message: isNodeletError(r.reason) ? r.reason.detail : String((r.reason as Error)?.message ?? r.reason), error: r.reason });
  });
  if (failures.length > 0) throw setUpError(failures);
  return out;
}

function setUpError(failures: VolumeFailure[]): VolumeSetUpError {
  const first = failures[0]!.error;
  const code: ErrorCode = isNodeletError(first) ? first.code : 'NDL_VOLUME_SOURCE';
  const err = nodeletError(code, failures.map(failedMountMessage).join('; '), first) as NodeletError & { failures?: VolumeFailure[] };
  err.failures = failures;
  return err as VolumeSetUpError;
}

/** Options of {@link teardownVolumes}. */
export interface TeardownOptions {
  /** The node's volume plugins (their `tearDown`s run first). */
  readonly plugins: VolumePluginRegistry;
  readonly log?: Logger;
}

/**
 * Removes `<podDir>/volumes` and everything below it: for each volume dir,
 * its plugin's `tearDown` first (if it has one), then the dir — symlinks are
 * removed as links, never followed. hostPath volumes live outside the pod
 * dir and are not touched. Keeps going after a failure; throws the first.
 */
export async function teardownVolumes(podDir: string, opts: TeardownOptions): Promise<void> {
  const plugins = opts.plugins;
  const root = path.join(podDir, 'volumes');
  const st = await lstat(root).catch(() => undefined);
  if (!st) return;
  if (!st.isDirectory()) return removeTreeNoFollow(root);
  let firstError: unknown;
  for (const pluginDir of await readdir(root)) {
    const plugin = plugins.byDirName(pluginDir);
    const full = path.join(root, pluginDir);
    const pst = await lstat(full);
    if (!pst.isDirectory() || !plugin?.tearDown) {
      await removeTreeNoFollow(full);
      continue;
    }
    for (const name of await readdir(full)) {
      const volumeDir = path.join(full, name);
      if (!name.startsWith('.')) {
        try {
          await plugin.tearDown(name, { volumeDir, podDir, log: opts.log });
        } catch (e) {
          opts.log?.error({ err: e, volume: name, plugin: plugin.pluginName }, 'volume tear-down failed; keeping its dir');
          firstError ??= e;
          continue;
        }
      }
      await removeTreeNoFollow(volumeDir);
    }
    await rmdir(full).catch(() => {});
  }
  if (firstError !== undefined) throw firstError;
  await rmdir(root).catch(() => {});
}

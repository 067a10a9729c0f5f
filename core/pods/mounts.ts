/**
 * A container's mounts from its `volumeMounts` and the prepared volumes
 * (upstream kubelet `makeMounts`), `subPath`/`subPathExpr` included.
 *
 * subPath is resolved on disk with `resolveInRoot`: every symlink on the way
 * must stay inside the volume (CVE-2017-1002101, CVE-2021-25741), a missing
 * subPath dir is created with the volume root's mode, and the mount's
 * `hostPath` is the *real* path (no symlink left in it; for a whole volume too).
 * A container writing to the same volume can later swap a directory of that
 * real path for a symlink — upstream pins it by bind-mounting an open fd,
 * which has no equivalent for a WASI preopen — so whoever uses the path later
 * checks at the time of the access that it is still a real path of the same
 * directory (the wasi provider at every WASI path call, the termination
 * message reader when it reads).
 *
 * A subPath may name a file (upstream allows it); the mount's `hostPath` is
 * then that file.
 *
 * An image volume is read-only content shared by its pods: its subPath must
 * exist (never created; missing: `CreateContainerError`, as the runtime fails
 * upstream), and a volume whose image could not be pulled fails the containers
 * mounting it with the pull's reason (`ErrImagePull`, `ImagePullBackOff`: a
 * provider error carrying that reason).
 *
 * A whole volume whose dir nodelet made itself (emptyDir, configMap, secret,
 * downwardAPI, projected) under its pods dir has no symlink below that dir: its
 * real path is the pods dir's real path and the rest, with no call. A `realpath`
 * through libuv's pool waited for a pool thread and an event-loop turn, 23 ms at
 * p50 on the way to each container's start under a 100-pod burst (bench/results/,
 * "The IP record and the mounts' real paths off the pool").
 */
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { V1Container, V1Pod, V1VolumeMount } from '@kubernetes/client-node';
import { providerError, type Mount } from '@nodelet/plugin-api/v1';
import { isNodeletError, nodeletError } from '../errors/index.ts';
import { resolveInRoot, validateRelativePath } from '../paths/index.ts';
import type { PreparedVolume } from '../volumes/index.ts';
import { expand } from './env.ts';

/** The volume kinds whose dir (under the pod's dir) nodelet makes and fills itself: no symlink on the way to it. */
const MADE_BY_NODELET = new Set(['emptyDir', 'configMap', 'secret', 'downwardAPI', 'projected']);

/** Options of {@link resolveMounts}. */
export interface ResolveMountsOptions {
  /** The pods dir, and its real path (symlinks resolved): the volumes nodelet made under it need no `realpath`. */
  readonly pods?: { readonly dir: string; readonly real: string };
}

/** Upstream `ExpandContainerVolumeMounts`: every referenced var must be set and non-empty. */
export function expandSubPathExpr(expr: string, env: Readonly<Record<string, string>>): string {
  const missing = new Set<string>();
  const out = expand(expr, (k) => {
    const v = Object.hasOwn(env, k) ? env[k]! : '';
    if (v === '') missing.add(k);
    return v;
  });
  if (missing.size > 0) throw nodeletError('NDL_CONTAINER_CONFIG', `missing value for ${[...missing].sort().join(', ')}`);
  return out;
}

async function subPathHost(vol: PreparedVolume, m: V1VolumeMount, subPath: string): Promise<string> {
  const owner = vol.name;
  validateRelativePath(owner, subPath, { what: 'subPath', allowRoot: true });
  if (vol.kind === 'image') {
    return resolveInRoot(vol.hostPath, owner, subPath, { what: 'subPath', allowRoot: true }).catch((e: unknown) => {
      if (isNodeletError(e)) throw e;
      const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist in the image' : ((e as NodeJS.ErrnoException).code ?? (e as Error).message);
      throw providerError('InvalidArgument', `failed to prepare subPath for volumeMount ${JSON.stringify(m.name)}: ${JSON.stringify(subPath)} ${why}`, {
        reason: 'CreateContainerError',
      });
    });
  }
  const rootMode = (await stat(vol.hostPath)).mode & 0o7777;
  try {
    return await resolveInRoot(vol.hostPath, owner, subPath, { what: 'subPath', allowRoot: true, createMode: rootMode });
  } catch (e) {
    if (isNodeletError(e)) throw e;
    throw nodeletError(
      'NDL_CONTAINER_CONFIG',
      `failed to prepare subPath for volumeMount ${JSON.stringify(m.name)}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      e,
    );
  }
}

/**
 * The container's mounts in `volumeMounts` order. `env` (from `resolveEnv`)
 * is needed for `subPathExpr`. `readOnly` = the mount's `readOnly` or the
 * volume's forced read-only. Throws `NDL_POD_INVALID` (unknown volume,
 * relative mountPath), `NDL_PATH_ESCAPE` (bad or escaping subPath),
 * `NDL_CONTAINER_CONFIG` (subPathExpr var missing).
 */
export async function resolveMounts(
  _pod: V1Pod,
  container: V1Container,
  prepared: ReadonlyMap<string, PreparedVolume>,
  env: Readonly<Record<string, string>> = {},
  opts: ResolveMountsOptions = {},
): Promise<Mount[]> {
  const pods = opts.pods;
  /** The real path of a volume nodelet made under the pods dir, without a call; else undefined. */
  const known = (vol: PreparedVolume) =>
    pods && MADE_BY_NODELET.has(vol.kind) && vol.hostPath.startsWith(`${pods.dir}/`) && path.normalize(vol.hostPath) === vol.hostPath
      ? pods.real + vol.hostPath.slice(pods.dir.length)
      : undefined;
  const mounts: Mount[] = [];
  for (const m of container.volumeMounts ?? []) {
    const vol = prepared.get(m.name);
    if (!vol) throw nodeletError('NDL_POD_INVALID', `cannot find volume ${JSON.stringify(m.name)} to mount into container ${JSON.stringify(container.name)}`);
    if (vol.unavailable) throw providerError('ImagePull', vol.unavailable.message, { reason: vol.unavailable.reason });
    if (!path.posix.isAbsolute(m.mountPath ?? '')) {
      throw nodeletError('NDL_POD_INVALID', `container ${JSON.stringify(container.name)}: mountPath ${JSON.stringify(m.mountPath)} must be an absolute path`);
    }
    if (m.subPath && m.subPathExpr) {
      throw nodeletError(
        'NDL_POD_INVALID',
        `container ${JSON.stringify(container.name)}: volumeMount ${JSON.stringify(m.name)}: subPath and subPathExpr are mutually exclusive`,
      );
    }
    const subPath = m.subPathExpr ? expandSubPathExpr(m.subPathExpr, env) : (m.subPath ?? '');
    // Always a real path: providers and the termination message reader check at access time that it still is one.
    const hostPath = subPath !== '' ? await subPathHost(vol, m, subPath) : (known(vol) ?? (await realpath(vol.hostPath).catch(() => vol.hostPath)));
    mounts.push({ name: m.name, hostPath, containerPath: path.posix.normalize(m.mountPath), readOnly: m.readOnly === true || vol.readOnly });
  }
  return mounts;
}

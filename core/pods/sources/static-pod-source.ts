/**
 * Static pods from `--pod-manifest-path` (upstream's file source): a single
 * manifest file, or a directory whose `.yaml`/`.yml`/`.json` files each hold one
 * Pod. Like upstream, the pod's name gets `-<nodeName>`, its namespace defaults
 * to `default`, its UID is a hash of the file content, and it carries
 * `kubernetes.io/config.source: file`; then upstream's pod validation is applied
 * before anything else, and references to API objects are refused
 * (`PreventStaticPodAPIReferences`, on by default since 1.34). Relative `file:` images are resolved against the
 * manifest's directory.
 *
 * Only regular files are opened (never a FIFO or device), reads are asynchronous,
 * and a manifest over 10 MiB is refused (upstream's `maxConfigLength`). Manifests
 * that cannot become pods are returned as {@link RefusedManifest}s for an event.
 */
import { createHash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import { nodeletError } from '../../errors/index.ts';
import { readRegularFile } from '../../paths/index.ts';
import { staticPodApiReference, validatePodCreate } from '../pod-validation.ts';

/** Largest manifest read (upstream pkg/kubelet/config/common.go `maxConfigLength`, 10 MiB). */
export const MAX_MANIFEST_BYTES = 10 * 1024 * 1024;

/** A manifest file that did not become a static pod, and why. */
export interface RefusedManifest {
  readonly file: string;
  readonly message: string;
}

/** The static pods of a manifest path and the manifests refused. */
export interface StaticPods {
  readonly pods: V1Pod[];
  readonly refused: RefusedManifest[];
}

/** Reads one manifest file into a static pod for `nodeName`; throws `NDL_POD_INVALID` naming the file. */
export async function readStaticPod(file: string, nodeName: string): Promise<V1Pod> {
  const text = (await readRegularFile(file, MAX_MANIFEST_BYTES)).toString('utf8');
  const { parse } = await import('yaml'); // loaded on first manifest only: most nodes have none (bench/README.md)
  let pod: V1Pod;
  try {
    pod = parse(text) as V1Pod;
  } catch (e) {
    throw nodeletError('NDL_POD_INVALID', `${file}: couldn't parse as pod: ${(e as Error).message.split('\n')[0]}`);
  }
  if (pod?.kind !== 'Pod' || !pod.metadata?.name || !Array.isArray(pod.spec?.containers) || pod.spec.containers.length === 0) {
    throw nodeletError('NDL_POD_INVALID', `${file}: expected a Pod with metadata.name and at least one container`);
  }
  const dir = resolve(file, '..');
  for (const c of [...pod.spec.containers, ...(Array.isArray(pod.spec.initContainers) ? pod.spec.initContainers : [])]) {
    if (typeof c?.image === 'string' && c.image.startsWith('file:') && !c.image.startsWith('file:///')) c.image = `file://${resolve(dir, c.image.slice(5))}`;
  }
  const uid = createHash('sha256').update(file).update(text).digest('hex').slice(0, 32);
  pod.metadata = {
    ...pod.metadata,
    name: `${pod.metadata.name}-${nodeName.toLowerCase()}`,
    namespace: pod.metadata.namespace ?? 'default',
    uid: `${uid.slice(0, 8)}-${uid.slice(8, 12)}-${uid.slice(12, 16)}-${uid.slice(16, 20)}-${uid.slice(20)}`,
    annotations: { ...pod.metadata.annotations, 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.hash': uid },
    creationTimestamp: new Date(),
  };
  pod.spec.nodeName = nodeName;
  pod.spec.restartPolicy ??= 'Always';
  pod.spec.terminationGracePeriodSeconds ??= 30;
  const errs = validatePodCreate(pod);
  if (errs.length > 0) throw nodeletError('NDL_POD_INVALID', `${file}: invalid pod: [${errs.join(', ')}]`);
  const reference = staticPodApiReference(pod);
  if (reference) throw nodeletError('NDL_POD_INVALID', `${file}: ${reference}`);
  return pod;
}

/** The manifest files of `path`: itself when it is a file, else its `.yaml`/`.yml`/`.json` entries (not hidden), sorted. */
async function manifestFiles(path: string): Promise<string[]> {
  const st = await stat(path);
  if (st.isFile()) return [path];
  if (!st.isDirectory()) throw nodeletError('NDL_POD_INVALID', `${path}: path is not a directory or file`);
  return (await readdir(path))
    .filter((n) => !n.startsWith('.') && /\.(ya?ml|json)$/.test(n))
    .sort()
    .map((n) => join(path, n));
}

/**
 * Reads the manifest path (a file or a directory). Sub-directories are skipped with a
 * log line (upstream does not recurse); every other file that cannot become a pod
 * is logged and returned in `refused`.
 */
export async function readStaticPods(path: string, nodeName: string, log: Logger): Promise<StaticPods> {
  let files: string[];
  try {
    files = await manifestFiles(path);
  } catch (e) {
    log.error({ path, err: (e as Error).message }, 'cannot read pod manifest path');
    return { pods: [], refused: [] };
  }
  const pods: V1Pod[] = [];
  const refused: RefusedManifest[] = [];
  const seen = new Map<string, string>();
  for (const file of files) {
    try {
      if ((await stat(file).catch(() => undefined))?.isDirectory()) {
        log.info({ file }, 'not recursing into manifest path');
        continue;
      }
      const pod = await readStaticPod(file, nodeName);
      const key = `${pod.metadata!.namespace}/${pod.metadata!.name}`;
      if (seen.has(key)) throw nodeletError('NDL_POD_INVALID', `${file}: pod ${key} is already defined by ${seen.get(key)}`);
      seen.set(key, file);
      pods.push(pod);
    } catch (e) {
      const message = (e as { detail?: string }).detail ?? `${file}: ${(e as Error).message}`;
      log.error({ file, err: message }, 'invalid static pod manifest skipped');
      refused.push({ file, message });
    }
  }
  return { pods, refused };
}

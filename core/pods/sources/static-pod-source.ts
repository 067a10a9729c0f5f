/**
 * Static pods from `--pod-manifest-path` (upstream's file source): each
 * `.yaml`/`.yml`/`.json` file holds one Pod. Like upstream, the pod's name gets
 * `-<nodeName>`, its namespace defaults to `default`, its UID is a hash of the
 * file content, and it carries `kubernetes.io/config.source: file`.
 * Relative `file:` images are resolved against the manifest's directory.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import { nodeletError } from '../../errors/catalogue.ts';

/** Reads one manifest file into a static pod for `nodeName`. */
export function readStaticPod(file: string, nodeName: string): V1Pod {
  const text = readFileSync(file, 'utf8');
  const pod = parse(text) as V1Pod;
  if (pod?.kind !== 'Pod' || !pod.metadata?.name || !Array.isArray(pod.spec?.containers) || pod.spec.containers.length === 0) {
    throw nodeletError('NDL_POD_INVALID', `${file}: expected a Pod with metadata.name and at least one container`);
  }
  const dir = resolve(file, '..');
  for (const c of [...pod.spec.containers, ...(pod.spec.initContainers ?? [])]) {
    if (c.image?.startsWith('file:') && !c.image.startsWith('file:///')) c.image = `file://${resolve(dir, c.image.slice(5))}`;
  }
  const uid = createHash('sha256').update(file).update(text).digest('hex').slice(0, 32);
  pod.metadata = {
    ...pod.metadata,
    name: `${pod.metadata.name}-${nodeName}`,
    namespace: pod.metadata.namespace ?? 'default',
    uid: `${uid.slice(0, 8)}-${uid.slice(8, 12)}-${uid.slice(12, 16)}-${uid.slice(16, 20)}-${uid.slice(20)}`,
    annotations: { ...pod.metadata.annotations, 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.hash': uid },
    creationTimestamp: new Date(),
  };
  pod.spec.nodeName = nodeName;
  pod.spec.restartPolicy ??= 'Always';
  pod.spec.terminationGracePeriodSeconds ??= 30;
  return pod;
}

/** Reads every manifest in `dir`; bad files are logged and skipped. */
export function readStaticPods(dir: string, nodeName: string, log: Logger): V1Pod[] {
  let names: string[];
  try { names = readdirSync(dir).filter((n) => /\.(ya?ml|json)$/.test(n)).sort(); } catch (e) {
    log.error({ dir, err: String(e) }, 'cannot read pod manifest path');
    return [];
  }
  const pods: V1Pod[] = [];
  for (const n of names) {
    const file = join(dir, n);
    try {
      if (!statSync(file).isFile()) continue;
      pods.push(readStaticPod(file, nodeName));
    } catch (e) { log.error({ file, err: (e as Error).message }, 'invalid static pod manifest skipped'); }
  }
  return pods;
}

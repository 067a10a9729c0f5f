/**
 * `emptyDir.sizeLimit` enforcement, as upstream's eviction manager does it
 * (`eviction_manager.go` `localStorageEviction` → `emptyDirLimitEviction`): every
 * `intervalMs` (10 s, upstream's housekeeping) the disk usage of each emptyDir
 * with a positive `sizeLimit` is measured (allocated blocks, as `du`); a pod whose
 * volume uses more is evicted at once (grace 0): `Failed`, reason `Evicted`,
 * message `Usage of EmptyDir volume "<name>" exceeds the limit "<limit>". `, the
 * condition `DisruptionTarget` (`TerminationByKubelet`) and a `Warning Evicted`
 * event. Critical pods (priority ≥ 2000000000) are never evicted, as upstream.
 *
 *   tick ──► active pods ──► emptyDirs with sizeLimit ──► du ──(over)──► evict (grace 0) ──► event
 *     ▲                                                     └──(within)──► nothing
 *     └──────────────── every intervalMs (ticks never overlap) ─────────────┘
 */
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import type { Events } from '../events/index.ts';
import { parseQuantity, quantityValue } from '../kube/index.ts';
import type { AbnormalTermination } from '../pods/index.ts';
import { volumeDirFor } from '../volumes/index.ts';

const EMPTY_DIR_PLUGIN = 'kubernetes.io/empty-dir';
const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

/** Dependencies of the emptyDir limit check. */
export interface EmptyDirLimitOptions {
  log: Logger;
  events: Events;
  /** Pods admitted and not finished. */
  activePods(): V1Pod[];
  /** The pod's directory (its volumes live under `<podDir>/volumes/`). */
  podDir(pod: V1Pod): string;
  /** Stops a pod for good (`PodController.terminateAbnormally`). */
  terminate(pod: V1Pod, t: AbnormalTermination): Promise<void>;
  /** Default 10 s. */
  intervalMs?: number;
}

/** Bytes allocated below `path` (files, dirs, links themselves; links are not followed); 0 when it is gone. */
export async function diskUsage(path: string): Promise<number> {
  let st;
  try {
    st = await lstat(path);
  } catch {
    return 0;
  }
  let total = st.blocks * 512;
  if (st.isDirectory()) {
    const names = await readdir(path).catch(() => [] as string[]);
    for (const n of names) total += await diskUsage(join(path, n));
  }
  return total;
}

/** The first emptyDir of `pod` over its limit, with upstream's eviction message; undefined when none is. */
export async function overLimit(pod: V1Pod, podDir: string): Promise<{ volume: string; message: string } | undefined> {
  for (const v of pod.spec?.volumes ?? []) {
    const limit = v.emptyDir?.sizeLimit;
    if (limit === undefined || limit === null) continue;
    let bytes: bigint;
    try {
      bytes = quantityValue(parseQuantity(String(limit)));
    } catch {
      continue;
    }
    if (bytes <= 0n) continue;
    const used = await diskUsage(volumeDirFor(podDir, EMPTY_DIR_PLUGIN, v.name));
    if (BigInt(used) > bytes)
      return { volume: v.name, message: `Usage of EmptyDir volume ${JSON.stringify(v.name)} exceeds the limit ${JSON.stringify(String(limit))}. ` };
  }
  return undefined;
}

/** Checks every active pod once; resolves to the keys of the pods it evicted. */
export async function checkEmptyDirLimits(o: EmptyDirLimitOptions): Promise<string[]> {
  const evicted: string[] = [];
  for (const pod of o.activePods()) {
    if ((pod.spec?.priority ?? 0) >= SYSTEM_CRITICAL_PRIORITY) continue;
    const over = await overLimit(pod, o.podDir(pod));
    if (!over) continue;
    const m = pod.metadata!;
    o.log.info({ pod: `${m.namespace}/${m.name}`, volume: over.volume }, 'evicting pod: emptyDir over its sizeLimit');
    o.events.emit({ kind: 'Pod', namespace: m.namespace!, name: m.name!, uid: m.uid! }, 'Warning', 'Evicted', over.message);
    await o.terminate(pod, {
      graceMs: 0,
      reason: 'Evicted',
      message: over.message,
      conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message: over.message }],
    });
    evicted.push(`${m.namespace}/${m.name}`);
  }
  return evicted;
}

/** Runs {@link checkEmptyDirLimits} every `intervalMs` until the returned stop is called. */
export function startEmptyDirLimits(o: EmptyDirLimitOptions): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const tick = async () => {
    try {
      await checkEmptyDirLimits(o);
    } catch (e) {
      o.log.warn({ err: String(e) }, 'emptyDir limit check failed');
    }
    if (!stopped) timer = setTimeout(() => void tick(), o.intervalMs ?? 10_000);
  };
  timer = setTimeout(() => void tick(), o.intervalMs ?? 10_000);
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}

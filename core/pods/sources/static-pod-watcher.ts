/**
 * Keeps the static pods in step with `--pod-manifest-path` while nodelet runs,
 * as upstream's file source (pkg/kubelet/config/file.go, file_linux.go): a
 * file watch (inotify, through chokidar) plus a full re-read every
 * `--file-check-frequency` (default 20 s). A manifest added becomes a pod, a
 * manifest removed removes its pod, a changed manifest (new content hash, so a
 * new UID) replaces the pod. A refused manifest is reported once per content,
 * not on every re-read.
 *
 *   change event ──(debounce)──┐
 *   every period ──────────────┴──► readStaticPods ──► diff by key and UID ──► added / removed / refused
 */
import chokidar, { type FSWatcher } from 'chokidar';
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import { readStaticPods, type RefusedManifest } from './static-pod-source.ts';

/** Changes within this window are read together. */
const DEBOUNCE_MS = 100;

/** What a re-read changed. */
export interface StaticPodChanges {
  /** New pods, and new versions (new UID) of existing ones. */
  readonly added: V1Pod[];
  /** Pods whose manifest is gone or changed (their old version). */
  readonly removed: V1Pod[];
  /** Manifests refused that were not reported before. */
  readonly refused: RefusedManifest[];
}

/** Options of {@link watchStaticPods}. */
export interface StaticPodWatchOptions {
  readonly path: string;
  readonly nodeName: string;
  readonly log: Logger;
  /** The pods read at start (already running). */
  readonly initial: readonly V1Pod[];
  /** The refusals already reported at start. */
  readonly initialRefused: readonly RefusedManifest[];
  /** `--file-check-frequency`: how often the manifests are re-read besides the file watch. */
  readonly periodMs: number;
  readonly onChange: (c: StaticPodChanges) => void;
}

const keyOf = (p: V1Pod) => `${p.metadata!.namespace}/${p.metadata!.name}`;
const refusalId = (r: RefusedManifest) => `${r.file}\0${r.message}`;

/** Watches the manifest path; returns a stop function. */
export function watchStaticPods(o: StaticPodWatchOptions): () => void {
  let current = new Map(o.initial.map((p) => [keyOf(p), p]));
  let reported = new Set(o.initialRefused.map(refusalId));
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;

  const reread = async (): Promise<void> => {
    const next = await readStaticPods(o.path, o.nodeName, o.log);
    if (stopped) return;
    const nextByKey = new Map(next.pods.map((p) => [keyOf(p), p]));
    const added: V1Pod[] = [];
    const removed: V1Pod[] = [];
    for (const [key, pod] of current) {
      const n = nextByKey.get(key);
      if (!n || n.metadata!.uid !== pod.metadata!.uid) removed.push(pod);
    }
    for (const [key, pod] of nextByKey) if (current.get(key)?.metadata!.uid !== pod.metadata!.uid) added.push(pod);
    const ids = new Set(next.refused.map(refusalId));
    const refused = next.refused.filter((r) => !reported.has(refusalId(r)));
    current = nextByKey;
    reported = ids;
    if (added.length || removed.length || refused.length) o.onChange({ added, removed, refused });
  };
  // One re-read at a time; changes during a re-read cause one more.
  const trigger = (): void => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = reread()
      .catch((e: unknown) => o.log.error({ path: o.path, err: String(e) }, 'static pod re-read failed'))
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          trigger();
        }
      });
  };
  const debounced = (): void => {
    clearTimeout(timer);
    timer = setTimeout(trigger, DEBOUNCE_MS);
  };
  const watcher: FSWatcher = chokidar.watch(o.path, { ignoreInitial: true, depth: 0, persistent: false });
  watcher.on('all', debounced);
  // Files changed between the first read and the watch being ready are seen by one re-read then.
  watcher.on('ready', debounced);
  watcher.on('error', (e) => o.log.warn({ path: o.path, err: String(e) }, 'static pod watch failed; re-reading periodically only'));
  const period = setInterval(trigger, o.periodMs);
  period.unref();
  return () => {
    stopped = true;
    clearTimeout(timer);
    clearInterval(period);
    void watcher.close();
  };
}

/**
 * ConfigMaps and Secrets read for pods through one watch per object, as
 * upstream's default `configMapAndSecretChangeDetectionStrategy: Watch`
 * (`pkg/kubelet/util/manager/watch_based_manager.go`): registering a pod adds a
 * reference to every object it refers to; the first reference starts a
 * list+watch restricted to that object (`fieldSelector=metadata.name=<name>`),
 * the last one going away stops it. Reads of a watched object wait for its
 * first list and answer from memory — a burst of pods mounting
 * `kube-root-ca.crt` costs one LIST+WATCH, not a GET per pod — and a change is
 * reported to the pods referring to it (so their volumes re-sync at once).
 * Reads of objects no registered pod refers to go to the wrapped source.
 *
 * One object's watch:
 *
 *     (none) ── first reference ─► LISTING ── list done ─► WATCHING ──┐
 *        ▲                           │                       │   ▲    │ change: notify the
 *        │                           └── last reference ─────┤   └────┘ referring pods
 *        └───────────── stop() ◄──────── gone ──────────────┘
 *
 * Upstream also stops watching objects that are `immutable` once seen; nodelet
 * keeps the watch (a few bytes on an idle stream).
 */
import type { V1ConfigMap, V1Pod, V1Secret } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import type { IssuedToken, ObjectSource, TokenRequestOptions } from './object-source.ts';
import { podObjectRefs } from './pod-object-refs.ts';

/** The two kinds a pod refers to by name. */
export type WatchedKind = 'configmaps' | 'secrets';

/** A running watch of one object. */
export interface SingleObjectWatch<T> {
  /** Settles once the first list answered (rejects if it failed). */
  readonly synced: Promise<void>;
  /** The object as last seen (undefined: it does not exist). */
  current(): T | undefined;
  stop(): void;
}

/** Starts the watch of one object; `changed` is called on each add/update/delete after the first list. */
export type StartObjectWatch = (kind: WatchedKind, namespace: string, name: string, changed: () => void) => SingleObjectWatch<V1ConfigMap | V1Secret>;

/** How long a read waits for a new watch's first list before asking the wrapped source instead. */
const SYNC_WAIT_MS = 5_000;

interface Item {
  refs: number;
  watch: SingleObjectWatch<V1ConfigMap | V1Secret>;
  /** Date.now() of the last change seen (0: none since the first list). */
  changedAt: number;
}

const keyOf = (kind: WatchedKind, ns: string, name: string) => `${kind}/${ns}/${name}`;

/** An {@link ObjectSource} whose ConfigMaps and Secrets come from per-object watches, ref-counted by pods. */
export class WatchingObjectSource implements ObjectSource {
  private readonly items = new Map<string, Item>();
  /** Keys each registered pod (by uid) holds a reference on. */
  private readonly byPod = new Map<string, Set<string>>();
  private readonly listeners: ((podUids: string[]) => void)[] = [];

  constructor(
    private readonly inner: ObjectSource,
    private readonly startWatch: StartObjectWatch,
    private readonly log?: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Adds (or, for a pod seen before, updates) the pod's references; starts the watches of newly referenced objects. */
  registerPod(pod: V1Pod): void {
    const uid = pod.metadata?.uid;
    const ns = pod.metadata?.namespace;
    if (!uid || !ns) return;
    const refs = podObjectRefs(pod);
    const next = new Set<string>([...[...refs.configMaps].map((n) => keyOf('configmaps', ns, n)), ...[...refs.secrets].map((n) => keyOf('secrets', ns, n))]);
    const prev = this.byPod.get(uid) ?? new Set<string>();
    for (const k of next) if (!prev.has(k)) this.ref(k);
    for (const k of prev) if (!next.has(k)) this.unref(k);
    if (next.size) this.byPod.set(uid, next);
    else this.byPod.delete(uid);
  }

  /** Drops the pod's references; watches no pod needs any more are stopped. */
  unregisterPod(uid: string): void {
    const keys = this.byPod.get(uid);
    if (!keys) return;
    this.byPod.delete(uid);
    for (const k of keys) this.unref(k);
  }

  /** Calls `fn` with the uids of the pods referring to an object that changed. */
  onChange(fn: (podUids: string[]) => void): void {
    this.listeners.push(fn);
  }

  /** True when an object `pod` refers to changed at or after `since` (Date.now() ms). */
  changedSince(pod: V1Pod, since: number): boolean {
    for (const k of this.byPod.get(pod.metadata?.uid ?? '') ?? []) if ((this.items.get(k)?.changedAt ?? 0) >= since) return true;
    return false;
  }

  /** The objects watched now, as `kind/namespace/name` with their reference counts (tests, debugging). */
  watched(): Record<string, number> {
    return Object.fromEntries([...this.items].map(([k, i]) => [k, i.refs]));
  }

  getConfigMap(namespace: string, name: string): Promise<V1ConfigMap | undefined> {
    return this.read('configmaps', namespace, name, () => this.inner.getConfigMap(namespace, name)) as Promise<V1ConfigMap | undefined>;
  }

  getSecret(namespace: string, name: string): Promise<V1Secret | undefined> {
    return this.read('secrets', namespace, name, () => this.inner.getSecret(namespace, name)) as Promise<V1Secret | undefined>;
  }

  forgetPod(podUID: string): void {
    this.inner.forgetPod?.(podUID);
  }

  requestServiceAccountToken(namespace: string, serviceAccount: string, opts: TokenRequestOptions): Promise<IssuedToken> {
    return this.inner.requestServiceAccountToken(namespace, serviceAccount, opts);
  }

  /** Stops every watch (nodelet stopping). */
  stop(): void {
    for (const i of this.items.values()) i.watch.stop();
    this.items.clear();
    this.byPod.clear();
  }

  private async read(kind: WatchedKind, ns: string, name: string, fallback: () => Promise<unknown>): Promise<unknown> {
    const item = this.items.get(keyOf(kind, ns, name));
    if (!item) return fallback();
    let timer: NodeJS.Timeout | undefined;
    const synced = await Promise.race([
      item.watch.synced.then(
        () => true,
        () => false,
      ),
      new Promise<false>((r) => (timer = setTimeout(() => r(false), SYNC_WAIT_MS))),
    ]).finally(() => clearTimeout(timer));
    return synced ? item.watch.current() : fallback();
  }

  private ref(key: string): void {
    const have = this.items.get(key);
    if (have) {
      have.refs++;
      return;
    }
    const [kind, ns, name] = key.split('/') as [WatchedKind, string, string];
    const item: Item = { refs: 1, changedAt: 0, watch: undefined as never };
    item.watch = this.startWatch(kind, ns, name, () => {
      item.changedAt = this.now();
      const uids = [...this.byPod].filter(([, keys]) => keys.has(key)).map(([uid]) => uid);
      this.log?.debug({ object: key, pods: uids.length }, 'watched object changed');
      for (const fn of this.listeners) fn(uids);
    });
    item.watch.synced.catch(() => undefined); // reads fall back; the watch retries on its own
    this.items.set(key, item);
  }

  private unref(key: string): void {
    const item = this.items.get(key);
    if (!item) return;
    if (--item.refs > 0) return;
    item.watch.stop();
    this.items.delete(key);
  }
}

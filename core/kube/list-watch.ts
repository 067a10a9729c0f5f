/**
 * A list-then-watch cache of one resource (an informer), with client-node's
 * `ListWatch` behaviour, which nodelet used before its own client:
 *
 *   start() ──► (no resourceVersion?) LIST ──► items diffed into the cache (add/update/delete)
 *                        │ fails: 'error'          │
 *                        ▼                         ▼
 *                     STOPPED ◄── 'error' ──── WATCH from resourceVersion ◄─┐ (bookmarks asked for; the
 *                        ▲      (any other             │ events: cache + rv │  apiserver ends it after
 *                        │       watch error)          │ ends / idle timeout┘  5-10 min; after a back-off
 *                        │                             │ 410 Gone: rv = '' ─► LIST      once connected)
 *                     stop()
 *
 * After an 'error' the owner restarts it with `start()`, from the last resourceVersion.
 */
import type { ApiTransport, Query } from './api-transport.ts';

interface KubeObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

/** A list answer: items and the list's resourceVersion. */
export interface ObjectList<T> {
  items: T[];
  metadata?: { resourceVersion?: string };
}

type Verb = 'add' | 'update' | 'delete' | 'error';

const BASE_RECONNECT_DELAY_MS = 1000;
const MAX_RECONNECT_DELAY_MS = 30_000;

/**
 * A watch asks the apiserver to end it after a random 5 to 10 minutes (upstream's reflector:
 * `minWatchTimeout` × (1 + rand)), so the watches of many nodes do not end together.
 */
const MIN_WATCH_TIMEOUT_S = 300;

/**
 * A watch asks for bookmarks (`allowWatchBookmarks`, as the reflector does): the apiserver's watch cache
 * sends one every minute (`defaultBookmarkFrequency`; and 2 s before the watch's timeout), so a quiet
 * resource's watch is not silent, and a watch silent for 75 s (the cacher's own `DefaultEventFreshDuration`,
 * that minute plus 15 s) is taken as a dead connection and started again. Without bookmarks a quiet watch
 * (the node's pods while none change, Services, RuntimeClasses) had to be dropped after 30 s of silence
 * and started again: three requests a minute per node for nothing, on the apiserver of a fleet of nodes
 * (bench/README.md, "A fleet of nodes").
 */
export const LIST_WATCH_IDLE_TIMEOUT_MS = 75_000;

/** The `timeoutSeconds` of one watch: {@link MIN_WATCH_TIMEOUT_S} × (1 + `random`), `random` in [0, 1). */
export function watchTimeoutSeconds(random: number = Math.random()): number {
  return Math.floor(MIN_WATCH_TIMEOUT_S * (1 + Math.min(Math.max(random, 0), 0.999)));
}

/** An informer over `path` (see the module comment). */
export class ListWatch<T extends KubeObject> {
  private objects = new Map<string, Map<string, T>>();
  private readonly callbacks: Record<Verb, ((x: never) => void)[]> = { add: [], update: [], delete: [], error: [] };
  private resourceVersion = '';
  private stopped = false;
  private hasConnected = false;
  private reconnectDelayMs = 0;
  private request: AbortController | undefined;
  /** Bumped on every (re)start of a watch, so a stale watch's `done` is ignored. */
  private generation = 0;

  constructor(
    private readonly transport: ApiTransport,
    private readonly path: string,
    private readonly listFn: () => Promise<ObjectList<T>>,
    private readonly selectors: { fieldSelector?: string; labelSelector?: string } = {},
  ) {}

  /** Registers a callback. */
  on(verb: 'add' | 'update' | 'delete', cb: (obj: T) => void): void;
  on(verb: 'error', cb: (err: unknown) => void): void;
  on(verb: Verb, cb: (x: never) => void): void {
    this.callbacks[verb].push(cb);
  }

  /** Lists (when there is no resourceVersion) and starts watching; rejects when the list fails. */
  async start(): Promise<void> {
    this.stopped = false;
    this.reconnectDelayMs = 0;
    this.hasConnected = false;
    await this.next(null, ++this.generation);
  }

  /** Stops watching; the cache stays readable. */
  stop(): void {
    this.stopped = true;
    this.generation++;
    this.abort();
  }

  /** The cached object `name` (in `namespace`, for namespaced resources). */
  get(name: string, namespace?: string): T | undefined {
    return this.objects.get(namespace ?? '')?.get(name);
  }

  /** Every cached object. */
  list(): T[] {
    return [...this.objects.values()].flatMap((m) => [...m.values()]);
  }

  /** The resourceVersion the watch resumes from ('' before the first list). */
  latestResourceVersion(): string {
    return this.resourceVersion;
  }

  private abort(): void {
    this.request?.abort();
    this.request = undefined;
  }

  private emit(verb: Verb, x: unknown): void {
    for (const cb of this.callbacks[verb].slice()) (cb as (x: unknown) => void)(x);
  }

  private async next(err: unknown, gen: number): Promise<void> {
    if (gen !== this.generation) return;
    this.abort();
    const e = err as { httpStatus?: unknown; name?: unknown } | null;
    if (e && e.httpStatus === 410) this.resourceVersion = '';
    else if (e && e.name === 'TimeoutError') this.reconnectDelayMs = 0;
    else if (e) return this.emit('error', err);
    if (this.stopped) return;
    if (!this.resourceVersion) {
      let list: ObjectList<T>;
      try {
        list = await this.listFn();
      } catch (le) {
        if (gen === this.generation) this.emit('error', le);
        throw le;
      }
      if (gen !== this.generation) return;
      this.replace(list.items ?? []);
      this.resourceVersion = list.metadata?.resourceVersion ?? '';
    }
    if (this.reconnectDelayMs > 0 && this.hasConnected) await new Promise((r) => setTimeout(r, this.reconnectDelayMs));
    if (this.hasConnected)
      this.reconnectDelayMs = Math.min(this.reconnectDelayMs > 0 ? this.reconnectDelayMs * 2 : BASE_RECONNECT_DELAY_MS, MAX_RECONNECT_DELAY_MS);
    this.hasConnected = true;
    if (gen !== this.generation || this.stopped) return;
    const wgen = ++this.generation;
    const query: Query = { resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: watchTimeoutSeconds(), ...this.selectors };
    const ctl = await this.transport.watch(
      this.path,
      query,
      (type, obj) => {
        if (wgen === this.generation) this.onEvent(type, obj as T & { code?: number });
      },
      (werr) => void this.next(werr, wgen).catch(() => undefined),
      LIST_WATCH_IDLE_TIMEOUT_MS,
    );
    if (wgen === this.generation) this.request = ctl;
    else ctl.abort();
  }

  private onEvent(type: string, obj: T & { code?: number }): void {
    switch (type) {
      case 'ERROR':
        if (obj.code === 410) this.resourceVersion = '';
        return; // the watch ends; `next` relists or reports
      case 'ADDED':
      case 'MODIFIED':
        this.put(obj);
        break;
      case 'DELETED':
        this.remove(obj);
        break;
      default: // BOOKMARK: only the resourceVersion
    }
    this.reconnectDelayMs = 0;
    this.resourceVersion = obj.metadata?.resourceVersion ?? '';
  }

  private put(obj: T): void {
    const ns = obj.metadata?.namespace ?? '';
    const name = obj.metadata?.name ?? '';
    let m = this.objects.get(ns);
    if (!m) this.objects.set(ns, (m = new Map()));
    const old = m.get(name);
    m.set(name, obj);
    if (!old) this.emit('add', obj);
    else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) this.emit('update', obj);
  }

  private remove(obj: T): void {
    const ns = obj.metadata?.namespace ?? '';
    const m = this.objects.get(ns);
    if (!m?.delete(obj.metadata?.name ?? '')) return;
    if (m.size === 0) this.objects.delete(ns);
    this.emit('delete', obj);
  }

  /** A fresh list: objects gone from it are deleted, the rest added or updated. */
  private replace(items: T[]): void {
    const keep = new Set(items.map((o) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`));
    for (const old of this.list()) if (!keep.has(`${old.metadata?.namespace ?? ''}/${old.metadata?.name ?? ''}`)) this.remove(old);
    for (const o of items) this.put(o);
  }
}

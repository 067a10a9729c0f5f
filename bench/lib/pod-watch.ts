/**
 * Watches the pods of one namespace and records, per pod, when this process
 * received the first watch event showing it Running (and Succeeded/Failed),
 * next to its creationTimestamp (1 s resolution) and the time its node reported
 * it Ready (the Ready condition's lastTransitionTime, 1 s resolution).
 *
 * Each watch stream resumes from the last resourceVersion it saw, as an
 * informer's reflector does. An apiserver short of CPU closes a watcher that
 * falls 10 events behind ("Forcing pods watcher close due to unresponsiveness"
 * in its log); a watch opened again without a resourceVersion starts with every
 * pod of the namespace as ADDED, falls behind again at once, and in a 50-node
 * burst saw nothing new for 10–20 s, so every pod's Running was stamped with
 * the time the burst's load ended (bench/README.md, figure 11).
 */
import * as k8s from '@kubernetes/client-node';

/** What was observed for one pod. */
export interface PodTimes {
  created: number;
  node?: string;
  /** When this process first saw the pod bound to a node (its watch event with spec.nodeName). */
  bound?: number;
  running?: number;
  /** The Ready condition's lastTransitionTime (the node's clock, 1 s resolution), once True. */
  ready?: number;
  finished?: number;
  phase?: string;
}

/** Options of {@link PodWatch.start}. */
export interface PodWatchOptions {
  /**
   * Watch the namespace's pods node by node (one stream per node, field selector
   * `spec.nodeName`) instead of in one stream. The apiserver's watch cache sends
   * such a stream only its node's pods (the index kubelets' own watches use), so it
   * falls behind far less often than one stream of every pod; a pod is first seen
   * when it is bound.
   */
  nodes?: readonly string[];
}

/** A namespace pod watch. */
export class PodWatch {
  readonly pods = new Map<string, PodTimes>();
  /** Times a stream was opened again after the apiserver or the connection ended it. */
  reopens = 0;
  private readonly reqs = new Map<string, { abort(): void }>();
  private waiters: Array<() => void> = [];
  private stopped = false;

  private constructor(
    private readonly kc: k8s.KubeConfig,
    readonly ns: string,
  ) {}

  /** Starts watching `ns` and resolves once every stream is established. */
  static async start(kc: k8s.KubeConfig, ns: string, opts: PodWatchOptions = {}): Promise<PodWatch> {
    const w = new PodWatch(kc, ns);
    const selectors = opts.nodes ? opts.nodes.map((n) => `spec.nodeName=${n}`) : [''];
    await Promise.all(selectors.map((s) => w.open(s)));
    return w;
  }

  /** Opens the stream of `selector` (a field selector, or '' for all), from `rv` when given. */
  private async open(selector: string, rv?: string): Promise<void> {
    if (this.stopped) return;
    let last = rv;
    const opts: Record<string, string | boolean> = { allowWatchBookmarks: true };
    if (selector) opts.fieldSelector = selector;
    if (last !== undefined) opts.resourceVersion = last;
    const req = (await new k8s.Watch(this.kc).watch(
      `/api/v1/namespaces/${this.ns}/pods`,
      opts,
      (type, obj: k8s.V1Pod & k8s.V1Status) => {
        if (type === 'ERROR') {
          // 410 Gone: the apiserver no longer holds that version; start over from the current state.
          if (obj.code === 410) last = undefined;
          return;
        }
        last = obj.metadata?.resourceVersion ?? last;
        if (type === 'ADDED' || type === 'MODIFIED') this.seen(obj);
      },
      (err) => {
        if (this.stopped) return;
        if (err) process.stderr.write(`pod watch of ${this.ns}${selector ? ` (${selector})` : ''} ended: ${String(err)}; reopening\n`);
        this.reopens++;
        this.reopen(selector, last, err ? 100 : 0);
      },
    )) as { abort(): void };
    if (this.stopped) req.abort();
    else this.reqs.set(selector, req);
  }

  /** Opens the stream of `selector` again after `delayMs`, and every second after that until it opens. */
  private reopen(selector: string, rv: string | undefined, delayMs: number): void {
    setTimeout(() => void this.open(selector, rv).catch(() => this.reopen(selector, rv, 1000)), delayMs);
  }

  /** Records what one watch event shows of a pod. */
  private seen(pod: k8s.V1Pod): void {
    const now = Date.now();
    const name = pod.metadata!.name!;
    const t = this.pods.get(name) ?? { created: new Date(pod.metadata!.creationTimestamp!).getTime() };
    t.node = pod.spec?.nodeName;
    if (t.bound === undefined && t.node) t.bound = now;
    t.phase = pod.status?.phase;
    if (t.running === undefined && t.phase === 'Running') t.running = now;
    const ready = pod.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True');
    if (t.ready === undefined && ready?.lastTransitionTime) t.ready = new Date(ready.lastTransitionTime).getTime();
    if (t.finished === undefined && (t.phase === 'Succeeded' || t.phase === 'Failed')) t.finished = now;
    this.pods.set(name, t);
    const ws = this.waiters;
    this.waiters = [];
    for (const f of ws) f();
  }

  /** Resolves once `ok()` is true (checked after each event); rejects after `timeoutMs`. */
  async until(what: string, ok: () => boolean, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!ok()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.min(left, 1000));
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  /** Number of pods seen Running (or finished after running). */
  runningCount(): number {
    let n = 0;
    for (const t of this.pods.values()) if (t.running !== undefined) n++;
    return n;
  }

  /** Stops the watch. */
  stop(): void {
    this.stopped = true;
    for (const r of this.reqs.values()) r.abort();
    this.reqs.clear();
  }
}

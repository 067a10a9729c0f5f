/**
 * Watches the pods of one namespace and records, per pod, when this process
 * received the first watch event showing it Running (and Succeeded/Failed),
 * next to its creationTimestamp (1 s resolution).
 */
import * as k8s from '@kubernetes/client-node';

/** What was observed for one pod. */
export interface PodTimes {
  created: number;
  node?: string;
  /** When this process first saw the pod bound to a node (its watch event with spec.nodeName). */
  bound?: number;
  running?: number;
  finished?: number;
  phase?: string;
}

/** A namespace pod watch. */
export class PodWatch {
  readonly pods = new Map<string, PodTimes>();
  private req?: { abort(): void };
  private waiters: Array<() => void> = [];

  private constructor(
    private readonly kc: k8s.KubeConfig,
    readonly ns: string,
  ) {}

  /** Starts watching `ns` and resolves once the watch is established. */
  static async start(kc: k8s.KubeConfig, ns: string): Promise<PodWatch> {
    const w = new PodWatch(kc, ns);
    await w.open();
    return w;
  }

  private async open(): Promise<void> {
    const watch = new k8s.Watch(this.kc);
    this.req = (await watch.watch(
      `/api/v1/namespaces/${this.ns}/pods`,
      { allowWatchBookmarks: false },
      (type, pod: k8s.V1Pod) => {
        const now = Date.now();
        const name = pod.metadata!.name!;
        if (type === 'DELETED') return;
        const t = this.pods.get(name) ?? { created: new Date(pod.metadata!.creationTimestamp!).getTime() };
        t.node = pod.spec?.nodeName;
        if (t.bound === undefined && t.node) t.bound = now;
        t.phase = pod.status?.phase;
        if (t.running === undefined && t.phase === 'Running') t.running = now;
        if (t.finished === undefined && (t.phase === 'Succeeded' || t.phase === 'Failed')) t.finished = now;
        this.pods.set(name, t);
        const ws = this.waiters;
        this.waiters = [];
        for (const f of ws) f();
      },
      (err) => {
        if (!this.req) return;
        if (err) process.stderr.write(`pod watch of ${this.ns} ended: ${String(err)}; reopening\n`);
        void this.open().catch(() => undefined);
      },
    )) as { abort(): void };
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
    const r = this.req;
    this.req = undefined;
    r?.abort();
  }
}

/**
 * Takes the usage snapshots `/stats/summary` and `/metrics/resource` serve:
 *
 * - node: nodelet's own process — every pod runs inside it (worker threads),
 *   so its CPU time (`process.cpuUsage()`) and resident set (`rss`) are what
 *   this node's workloads cost, nodelet included;
 * - containers: for each running container whose provider has the optional
 *   `stats()` capability, what the provider measures (for WASI: the worker
 *   thread's CPU time and the module's linear memory, see providers/wasi/README.md).
 *   Providers without it are left out (metrics-server then shows no figures).
 *
 * `usageNanoCores` comes from the previous snapshot of the same container (≥1 s apart).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { AnyProvider } from '@nodelet/plugin-api/v1';
import type { Logger } from '@nodelet/plugin-api/v1';
import type { ContainerUsage, PodUsage, StatsSnapshot, RunningCounts } from '../metrics/index.ts';

/** What the collector reads pods from (the pod controller). */
export interface PodsView {
  activePods(): V1Pod[];
  lookup(key: string): { pod: V1Pod; worker?: { provider: AnyProvider } } | undefined;
}

const PROCESS_START = new Date(Date.now() - process.uptime() * 1000);

/** The id a provider knows a container by: containerID without its `<scheme>://`. */
export function providerContainerId(containerID: string): string {
  const i = containerID.indexOf('://');
  return i < 0 ? containerID : containerID.slice(i + 3);
}

/** Takes snapshots; keeps the previous CPU samples for rates. */
export class StatsCollector {
  private readonly prev = new Map<string, { at: number; ns: number }>();

  constructor(
    private readonly nodeName: string,
    private readonly pods: PodsView,
    private readonly log: Logger,
  ) {}

  /** Nano-cores since the kept sample of `key` (kept samples are renewed once they are ≥1 s old). */
  private rate(key: string, at: number, ns: number): number | undefined {
    const prev = this.prev.get(key);
    if (!prev || at - prev.at >= 1000 || ns < prev.ns) this.prev.set(key, { at, ns });
    if (!prev || at <= prev.at || ns < prev.ns) return undefined;
    return ((ns - prev.ns) / (at - prev.at)) * 1000; // ns per ms → ns per s
  }

  /** A snapshot of the node and every running container. */
  async snapshot(): Promise<StatsSnapshot> {
    const now = new Date();
    const cpu = process.cpuUsage();
    const cpuNs = (cpu.user + cpu.system) * 1000;
    const mem = process.memoryUsage();
    let scrapeError = false;
    const seen = new Set<string>(['node']);
    const pods: PodUsage[] = [];
    await Promise.all(
      this.pods.activePods().map(async (pod) => {
        const m = pod.metadata!;
        const provider = this.pods.lookup(`${m.namespace}/${m.name}`)?.worker?.provider;
        if (!provider?.stats) return;
        const containers: ContainerUsage[] = [];
        for (const cs of pod.status?.containerStatuses ?? []) {
          const started = cs.state?.running?.startedAt;
          if (!started || !cs.containerID) continue;
          try {
            const st = await provider.stats(providerContainerId(cs.containerID));
            const key = `${m.uid}/${cs.name}/${cs.containerID}`;
            seen.add(key);
            const ns = st.cpu?.usageCoreNanoSeconds;
            containers.push({
              name: cs.name,
              startTime: new Date(started),
              timestamp: st.timestamp,
              cpuNs: ns,
              nanoCores: st.cpu?.usageNanoCores ?? (ns === undefined ? undefined : this.rate(key, st.timestamp.getTime(), ns)),
              workingSetBytes: st.memory?.workingSetBytes,
              usageBytes: st.memory?.usageBytes,
            });
          } catch (e) {
            // A container that ended between the status and the call is not an error.
            if ((e as { code?: string }).code !== 'NotFound') {
              scrapeError = true;
              this.log.warn({ pod: `${m.namespace}/${m.name}`, container: cs.name, err: String(e) }, 'container stats failed');
            }
          }
        }
        if (containers.length)
          pods.push({
            namespace: m.namespace!,
            name: m.name!,
            uid: m.uid!,
            startTime: pod.status?.startTime ? new Date(pod.status.startTime) : undefined,
            containers,
          });
      }),
    );
    for (const k of this.prev.keys()) if (!seen.has(k)) this.prev.delete(k);
    return {
      node: {
        nodeName: this.nodeName,
        startTime: PROCESS_START,
        timestamp: now,
        cpuNs,
        nanoCores: this.rate('node', now.getTime(), cpuNs),
        workingSetBytes: mem.rss,
        usageBytes: mem.rss,
        rssBytes: mem.rss,
      },
      pods,
      scrapeError,
    };
  }
}

/** The running pod/container counts of `/metrics`, from the pods' posted statuses. */
export function runningCounts(pods: PodsView): RunningCounts {
  const out: RunningCounts = { pods: 0, containers: { running: 0, exited: 0, created: 0 }, perProvider: {} };
  const providers = new Set<AnyProvider>();
  for (const pod of pods.activePods()) {
    const m = pod.metadata!;
    const p = pods.lookup(`${m.namespace}/${m.name}`)?.worker?.provider;
    if (p) providers.add(p);
    const provider = p?.name ?? 'unknown';
    out.perProvider[provider] = (out.perProvider[provider] ?? 0) + 1;
    let anyRunning = false;
    for (const cs of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
      if (cs.state?.running) {
        out.containers.running++;
        anyRunning = true;
      } else if (cs.state?.terminated) out.containers.exited++;
      else if (cs.containerID) out.containers.created++;
    }
    if (anyRunning) out.pods++;
  }
  const threads = [...providers].flatMap((p) => (p.threads?.() ?? []).map((t) => ({ provider: p.name, ...t })));
  if (threads.length > 0) out.threads = threads;
  const requests = [...providers].flatMap((p) => p.requestMetrics?.() ?? []);
  if (requests.length > 0) out.requests = requests;
  return out;
}

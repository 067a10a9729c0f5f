/**
 * The fleet figure: N nodelets vs N hollow nodes vs N kwok nodes on the same control plane, one
 * kind at a time (bench/lib/fleet.ts). For each kind:
 *   - every node Ready (the time it took from the first process start);
 *   - idle, over a window after a settle: the fleet's RSS and PSS (every node's process tree; kwok's one
 *     process) and CPU, per node; the requests the fleet sent (by flow schema, bench/lib/fleet-stats.ts)
 *     per second per node, and every client's together;
 *   - a burst of N×20 pods created at once (at most 100 create calls in flight), placed by the scheduler
 *     on the fleet's label: create call → first watch event showing the pod Running, p50/p90/p99 (and from
 *     creationTimestamp, the SIG-Scalability definition, 1 s resolution; and creationTimestamp → the Ready
 *     condition's lastTransitionTime, the node's own view), seen through one watch per node that resumes
 *     from its last resourceVersion (bench/lib/pod-watch.ts); the fleet's requests per second per
 *     node and its CPU from the first create call until every pod was Running, and the requests per pod
 *     (counted until they settle: statuses and events go on after Running); the fewest and most pods a node got;
 *   - the load average before and after.
 */
import type { ClusterInfo } from '../../test/cluster/control-plane.ts';
import { parseRequestTotals, scrapeMetrics, type CallCounts } from '../lib/api-calls.ts';
import type { Clients } from '../lib/env.ts';
import { FLEET_FLOW_SCHEMAS, FLEET_LABEL, startFleet, type Fleet, type FleetKind, type FleetOpts } from '../lib/fleet.ts';
import { dispatchedBetween, parseDispatchedByFlowSchema, perNode, perNodeRate, podsPerNode } from '../lib/fleet-stats.ts';
import { PodWatch } from '../lib/pod-watch.ts';
import { createNamespace, drainNamespace } from '../lib/pods.ts';
import { mib, treeMemory, treesCpuByThreadKind, treesCpuSeconds } from '../lib/proc.ts';
import { summary } from '../lib/stats.ts';
import { readFileSync } from 'node:fs';

/** Windows and sizes of the fleet figure. */
export interface FleetParams {
  /** Pods per node in the burst (20). */
  podsPerNode: number;
  /** Quiet time after every node is Ready, before the idle window. */
  settleMs: number;
  /** The idle window. */
  idleMs: number;
  /** How long the burst's pods may take to be Running. */
  burstTimeoutMs: number;
}

/** The fleet figure of one kind at one size. */
export interface FleetResult {
  kind: FleetKind;
  nodes: number;
  readyMs: number;
  idle: {
    windowS: number;
    rssMiBPerNode: number;
    pssMiBPerNode?: number;
    rssMiBTotal: number;
    processes: number;
    /** The fleet's RSS by command name. */
    byCommand: Record<string, { processes: number; rssMiB: number }>;
    coresPerNode: number;
    coresTotal: number;
    /** The fleet's own requests (its flow schemas). */
    requestsPerSPerNode: number;
    /** Every client's requests (the control plane's, the bench's, the fleet's). */
    requestsPerSAllClients: number;
    /** Every client's requests per second by verb and resource (apiserver_request_total: no identity), the 12 largest. */
    allClientsByResource: CallCounts;
  };
  burst: {
    pods: number;
    running: number;
    allRunningMs?: number;
    /** create call → Running. */
    latency: ReturnType<typeof summary>;
    /** creationTimestamp → Running (1 s resolution). */
    sig: ReturnType<typeof summary>;
    /**
     * creationTimestamp → the Ready condition's lastTransitionTime: when the node itself saw the pod ready,
     * without the time its status took to reach the apiserver and the bench's watch (1 s resolution).
     */
    nodeReported: ReturnType<typeof summary>;
    /** Times the bench's pod watch streams (one per node) were ended by the apiserver and resumed. */
    watchReopens: number;
    windowS: number;
    requestsPerSPerNode: number;
    requestsPerSAllClients: number;
    /**
     * The requests the burst made the fleet send, per pod: its requests from the first create call until they
     * settled after every pod was Running, less its idle rate over that time.
     */
    requestsPerPod: number;
    /**
     * Of those, the events the nodes posted, per pod (every event posted in that time less the scheduler's
     * `Scheduled` one per pod): kubemark's hollow kubelet records its events into a FakeRecorder (never posted).
     */
    nodeEventsPerPod: number;
    /** How long after the burst's window the fleet's requests took to settle. */
    settleS: number;
    coresPerNode: number;
    coresTotal: number;
    /** The fleet's CPU in the burst's window per pod Running, in ms, by thread kind (main, v8, workers, libuv, ended, or a helper's command). */
    cpuMsPerPodByThread: Record<string, number>;
    podsPerNode: { min: number; max: number };
    /** Create calls tried again (the apiserver dropped them), and the pods never created after 3 tries. */
    createRetries: number;
    createFailures: string[];
    error?: string;
  };
  /** Processes of the fleet that exited while it was measured. */
  exits: string[];
  load: { before: string; afterIdle: string; after: string };
  memAvailableGiB: { before: number; withFleet: number };
}

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const memAvailableGiB = () => Math.round((Number(/^MemAvailable:\s+(\d+)/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0) / 1048576) * 10) / 10;
const r1 = (v: number) => Math.round(v * 10) / 10;
const r3 = (v: number) => Math.round(v * 1000) / 1000;

/** RSS and PSS summed over the fleet's process trees, and RSS by command name (how many processes, MiB in all). */
function fleetMemory(f: Fleet): { rss: number; pss?: number; processes: number; byCommand: Record<string, { processes: number; rssMiB: number }> } {
  let rss = 0;
  let pss: number | undefined = 0;
  let processes = 0;
  const byCommand: Record<string, { processes: number; rssMiB: number }> = {};
  for (const pid of Object.values(f.roots)) {
    const m = treeMemory(pid);
    rss += m.rss;
    processes += m.pids;
    pss = pss === undefined || m.pss === undefined ? undefined : pss + m.pss;
    for (const p of m.byProcess) {
      const e = (byCommand[p.comm] ??= { processes: 0, rssMiB: 0 });
      e.processes++;
      e.rssMiB = r1(e.rssMiB + p.rssMiB);
    }
  }
  return { rss, pss, processes, byCommand };
}

const cpuOf = (f: Fleet) => Object.values(treesCpuSeconds(f.roots)).reduce((a, b) => a + b, 0);

/** Calls per second by series between two scrapes (refused ones' code series left out), the 12 largest, rounded to 0.001. */
function ratesByResource(before: CallCounts, after: CallCounts, seconds: number): CallCounts {
  return Object.fromEntries(
    Object.entries(after)
      .filter(([k]) => !/ \d\d\d$/.test(k))
      .map(([k, v]) => [k, r3((v - (before[k] ?? 0)) / seconds)] as const)
      .filter(([, v]) => v > 0)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 12),
  );
}

/** Runs `fn` over `items` with at most `limit` in flight. */
async function pool<T>(items: readonly T[], limit: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/** Starts a fleet of `n` nodes of `kind`, measures it (see the file comment), drains and stops it. */
export async function measureFleet(
  kind: FleetKind,
  n: number,
  info: ClusterInfo,
  c: Clients,
  o: Omit<FleetOpts, 'info' | 'c'>,
  p: FleetParams,
  /** Told the running fleet (and undefined once it stopped), so an interrupted bench can stop it. */
  running?: (f: Fleet | undefined) => void,
): Promise<FleetResult> {
  const load = { before: loadavg(), afterIdle: '', after: '' };
  const memBefore = memAvailableGiB();
  const fleet = await startFleet(kind, n, { ...o, info, c });
  running?.(fleet);
  const schemas = FLEET_FLOW_SCHEMAS[kind];
  const say = (s: string) => console.log(`  fleet ${kind} ×${n}: ${s}`);
  say(`every node Ready in ${fleet.readyMs} ms`);
  try {
    await new Promise((r) => setTimeout(r, p.settleMs));
    // Idle.
    const m0 = scrapeMetrics(info);
    const d0 = parseDispatchedByFlowSchema(m0);
    const cpu0 = cpuOf(fleet);
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, p.idleMs));
    const m1 = scrapeMetrics(info);
    const d1 = parseDispatchedByFlowSchema(m1);
    const cpu1 = cpuOf(fleet);
    const idleS = (performance.now() - t0) / 1000;
    const mem = fleetMemory(fleet);
    const memWith = memAvailableGiB();
    load.afterIdle = loadavg();
    const idle: FleetResult['idle'] = {
      windowS: Math.round(idleS),
      rssMiBPerNode: r1(mib(mem.rss) / n),
      pssMiBPerNode: mem.pss === undefined ? undefined : r1(mib(mem.pss) / n),
      rssMiBTotal: mib(mem.rss),
      processes: mem.processes,
      byCommand: mem.byCommand,
      coresPerNode: perNode((cpu1 - cpu0) / idleS, n, 4),
      coresTotal: r3((cpu1 - cpu0) / idleS),
      requestsPerSPerNode: perNodeRate(dispatchedBetween(d0, d1, schemas), idleS, n),
      requestsPerSAllClients: r1(dispatchedBetween(d0, d1) / idleS),
      allClientsByResource: ratesByResource(parseRequestTotals(m0), parseRequestTotals(m1), idleS),
    };
    say(`idle ${JSON.stringify(idle)}`);
    const burst = await burstOn(fleet, info, c, p, dispatchedBetween(d0, d1, schemas) / idleS);
    say(`burst ${JSON.stringify({ ...burst, latency: undefined })} latency ${JSON.stringify(burst.latency)}`);
    load.after = loadavg();
    return { kind, nodes: n, readyMs: fleet.readyMs, idle, burst, exits: [...fleet.exits], load, memAvailableGiB: { before: memBefore, withFleet: memWith } };
  } finally {
    await fleet.stop();
    running?.(undefined);
  }
}

/** `idleRequestsPerS`: the whole fleet's idle rate, taken off the requests counted after the burst's window. */
async function burstOn(fleet: Fleet, info: ClusterInfo, c: Clients, p: FleetParams, idleRequestsPerS: number): Promise<FleetResult['burst']> {
  const n = fleet.nodes.length;
  const pods = n * p.podsPerNode;
  const ns = `fleet-${fleet.kind}-${n}`;
  await createNamespace(c, ns);
  const w = await PodWatch.start(c.kc, ns, { nodes: fleet.nodes });
  const names = Array.from({ length: pods }, (_, i) => `p-${i}`);
  const starts = new Map<string, number>();
  const schemas = FLEET_FLOW_SCHEMAS[fleet.kind];
  let error: string | undefined;
  const createFailures: string[] = [];
  let createRetries = 0;
  try {
    const bm0 = scrapeMetrics(info);
    const d0 = parseDispatchedByFlowSchema(bm0);
    const cpu0 = cpuOf(fleet);
    const threads0 = treesCpuByThreadKind(fleet.roots);
    const t0 = Date.now();
    await pool(names, 100, async (name) => {
      const t = Date.now();
      // A create the loaded apiserver drops (`fetch failed`) is tried again (3 tries, 1 s apart); the time
      // counts from the first try. A pod never created is counted in `createFailures`, never waited for.
      for (let attempt = 1; ; attempt++) {
        try {
          await c.core.createNamespacedPod({
            namespace: ns,
            body: {
              metadata: { name, labels: { bench: 'fleet' } },
              spec: {
                nodeSelector: { [FLEET_LABEL]: fleet.kind },
                tolerations: [fleet.toleration],
                terminationGracePeriodSeconds: 5,
                containers: [{ name: 'main', image: fleet.image, args: ['1000000'] }],
              },
            },
          });
          starts.set(name, t);
          return;
        } catch (e) {
          // Created after all when the answer was lost: 409 AlreadyExists.
          if ((e as { code?: number }).code === 409) return void starts.set(name, t);
          if (attempt >= 3) {
            createFailures.push(`${name}: ${String((e as Error).message ?? e)}`);
            return;
          }
          createRetries++;
          await new Promise((r) => setTimeout(r, 1000));
        }
      }
    });
    const created = names.filter((x) => starts.has(x));
    await w
      .until(`${created.length} pods Running on ${n} ${fleet.kind} nodes`, () => created.every((x) => w.pods.get(x)?.running !== undefined), p.burstTimeoutMs)
      .catch((e: Error) => (error = e.message));
    const windowS = (Date.now() - t0) / 1000;
    const d1 = parseDispatchedByFlowSchema(scrapeMetrics(info));
    const cpu = cpuOf(fleet) - cpu0;
    const threads1 = treesCpuByThreadKind(fleet.roots);
    const ran = created.filter((x) => w.pods.get(x)?.running !== undefined);
    const fleetRequests = dispatchedBetween(d0, d1, schemas);
    // A node's requests for its pods go on after they are Running (statuses, events): count them per pod
    // until two scrapes 2 s apart see no more than the idle rate's worth.
    const tSettle = Date.now();
    let dEnd = d1;
    let bmEnd = '';
    for (;;) {
      await new Promise((r) => setTimeout(r, 2000));
      bmEnd = scrapeMetrics(info);
      const next = parseDispatchedByFlowSchema(bmEnd);
      const moved = dispatchedBetween(dEnd, next, schemas);
      dEnd = next;
      if (moved <= Math.max(2, idleRequestsPerS * 2 * 2) || Date.now() - tSettle > 60_000) break;
    }
    const burstRequests = dispatchedBetween(d0, dEnd, schemas) - idleRequestsPerS * ((Date.now() - t0) / 1000);
    // Events posted in the burst (apiserver_request_total has no identity) less the scheduler's one
    // `Scheduled` per pod: the node's events. The hollow kubelet's go to a FakeRecorder, never posted.
    const e0 = parseRequestTotals(bm0);
    const e1 = parseRequestTotals(bmEnd);
    const events = Object.keys(e1)
      .filter((k) => /^(POST|PATCH|PUT) (events\.k8s\.io)?\/events$/.test(k))
      .reduce((sum, k) => sum + e1[k]! - (e0[k] ?? 0), 0);
    const nodeEvents = Math.max(0, events - created.length);
    return {
      pods,
      running: ran.length,
      allRunningMs: ran.length === pods ? Math.max(...ran.map((x) => w.pods.get(x)!.running!)) - t0 : undefined,
      latency: summary(ran.map((x) => w.pods.get(x)!.running! - starts.get(x)!)),
      sig: summary(ran.map((x) => w.pods.get(x)!.running! - w.pods.get(x)!.created)),
      nodeReported: summary(ran.map((x) => w.pods.get(x)!).flatMap((t) => (t.ready === undefined ? [] : [t.ready - t.created]))),
      watchReopens: w.reopens,
      windowS: r1(windowS),
      requestsPerSPerNode: perNodeRate(fleetRequests, windowS, n),
      requestsPerSAllClients: r1(dispatchedBetween(d0, d1) / windowS),
      requestsPerPod: perNode(burstRequests, pods),
      nodeEventsPerPod: perNode(nodeEvents, pods),
      settleS: r1((Date.now() - tSettle) / 1000),
      coresPerNode: perNode(cpu / windowS, n, 4),
      coresTotal: r3(cpu / windowS),
      cpuMsPerPodByThread: Object.fromEntries(
        Object.entries(threads1)
          .map(([k, v]) => [k, Math.round(((v - (threads0[k] ?? 0)) * 1000) / Math.max(1, ran.length))] as const)
          .filter(([, v]) => v > 0),
      ),
      podsPerNode: podsPerNode(
        names.map((x) => w.pods.get(x)?.node),
        fleet.nodes,
      ),
      createRetries,
      createFailures,
      ...(error ? { error } : {}),
    };
  } finally {
    w.stop();
    await drainNamespace(c, ns, 600_000).catch((e: unknown) => console.log(`  draining ${ns}: ${String(e)}`));
  }
}

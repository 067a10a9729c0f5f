/**
 * API calls per pod, from the apiserver's `apiserver_request_total` counter
 * (labels verb, group, resource, subresource, code...). The metric carries no
 * client identity, so the bench diffs it around one node's latency phase (the
 * nodes' phases run one after another) and divides by the pods created in it.
 * The diff holds every client's calls in that window: the bench's own
 * (create, delete, list polling), the scheduler's and controllers', and the
 * node's. `nodeSide` keeps the calls a kubelet makes for a pod: pod GET,
 * pods/status, events (core and events.k8s.io: this includes the scheduler's
 * one `Scheduled` event per pod), serviceaccounts/token, configmaps and secrets.
 *
 * The apiserver's own time per call (`apiserver_request_duration_seconds`: from its
 * handler chain's start to the answer, APF queueing included) is diffed the same way:
 * a node's calls that take long there wait for the apiserver, not for the node.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { ClusterInfo } from '../../test/cluster/control-plane.ts';

/** Counter values keyed `VERB group/resource[/subresource]`. */
export type CallCounts = Record<string, number>;

/** API calls of one phase, per pod. */
export interface ApiCallsPerPod {
  pods: number;
  /** Every series that moved, per pod (rounded to 0.01), largest first. */
  all: CallCounts;
  /** The kubelet-side subset, per pod. */
  nodeSide: CallCounts;
  /** Sum of `nodeSide`. */
  nodeSideTotal: number;
  /** Kubelet-side calls the apiserver refused (4xx/5xx), as counts (not per pod), keyed `VERB resource code`. */
  refused: CallCounts;
  /** The apiserver's mean time per kubelet-side call in the phase, in ms (rounded to 0.1), when its durations were scraped. */
  serverMs?: CallCounts;
}

/** `apiserver_request_duration_seconds` sums and counts, keyed as {@link CallCounts}. */
export interface ServerTimes {
  seconds: CallCounts;
  calls: CallCounts;
}

/** Parses `apiserver_request_total` lines of a Prometheus text exposition into counts by verb/group/resource/subresource. */
export function parseRequestTotals(text: string): CallCounts {
  const out: CallCounts = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const close = line.lastIndexOf('}');
    const labels: Record<string, string> = {};
    for (const m of line.slice(24, close).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[m[1]!] = m[2]!;
    const value = Number(
      line
        .slice(close + 1)
        .trim()
        .split(' ')[0],
    );
    const res = [labels.group ?? '', labels.resource ?? ''].join('/') + (labels.subresource ? `/${labels.subresource}` : '');
    const key = `${labels.verb ?? '?'} ${res}`;
    out[key] = (out[key] ?? 0) + value;
    // Refused calls are also counted under their code (`POST /serviceaccounts/token 403`): a kubelet
    // that asks before the apiserver's caches saw a binding is refused (bench/results/, "pods that waited for the apiserver's caches").
    if (/^[45]\d\d$/.test(labels.code ?? '')) out[`${key} ${labels.code}`] = (out[`${key} ${labels.code}`] ?? 0) + value;
  }
  return out;
}

/** Parses `apiserver_request_duration_seconds_sum`/`_count` lines (every verb but WATCH) into seconds and calls by verb/group/resource/subresource. */
export function parseServerTimes(text: string): ServerTimes {
  const out: ServerTimes = { seconds: {}, calls: {} };
  for (const line of text.split('\n')) {
    const m = /^apiserver_request_duration_seconds_(sum|count)\{(.*)\} (\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of m[2]!.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    if (labels.verb === 'WATCH') continue;
    const key = `${labels.verb ?? '?'} ${[labels.group ?? '', labels.resource ?? ''].join('/')}${labels.subresource ? `/${labels.subresource}` : ''}`;
    const into = m[1] === 'sum' ? out.seconds : out.calls;
    into[key] = (into[key] ?? 0) + Number(m[3]);
  }
  return out;
}

/** The apiserver's /metrics as the admin (kubectl get --raw). */
export function scrapeMetrics(info: ClusterInfo): string {
  return execFileSync(join(info.binDir, 'kubectl'), [`--kubeconfig=${info.adminKubeconfig}`, 'get', '--raw', '/metrics'], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
}

/** Reads the apiserver's /metrics and returns the request counts. */
export function scrapeRequestTotals(info: ClusterInfo): CallCounts {
  return parseRequestTotals(scrapeMetrics(info));
}

/** Reads the apiserver's /metrics and returns its time per call (see {@link parseServerTimes}). */
export function scrapeServerTimes(info: ClusterInfo): ServerTimes {
  return parseServerTimes(scrapeMetrics(info));
}

/** The apiserver's mean ms per kubelet-side call between two scrapes (series with no call in between are left out). */
export function serverMsPerCall(before: ServerTimes, after: ServerTimes): CallCounts {
  const out: CallCounts = {};
  for (const [k, n] of Object.entries(after.calls)) {
    const calls = n - (before.calls[k] ?? 0);
    if (calls <= 0 || !NODE_SIDE.some((re) => re.test(k))) continue;
    out[k] = Math.round((((after.seconds[k] ?? 0) - (before.seconds[k] ?? 0)) / calls) * 10_000) / 10;
  }
  return out;
}

/**
 * Scrapes until the node's late calls stopped: nodelet sends its events one at a time (as
 * upstream's broadcaster), so after a burst they may still be going out when the pods are
 * gone; diffed too early, they would be counted in the next node's phase. Waits for two
 * scrapes `everyMs` apart with the same event and pod-status counts (at most `maxMs`).
 */
export async function settledRequestTotals(info: ClusterInfo, everyMs = 1000, maxMs = 60_000): Promise<CallCounts> {
  const moving = (c: CallCounts) =>
    Object.entries(c)
      .filter(([k]) => /^(POST|PATCH) [^ ]*\/events$|^\w+ \/pods\/status$/.test(k))
      .reduce((a, [, v]) => a + v, 0);
  const until = Date.now() + maxMs;
  let prev = scrapeRequestTotals(info);
  for (;;) {
    await new Promise((r) => setTimeout(r, everyMs));
    const next = scrapeRequestTotals(info);
    if (moving(next) === moving(prev) || Date.now() > until) return next;
    prev = next;
  }
}

const NODE_SIDE = [
  /^GET \/pods$/,
  /^\w+ \/pods\/status$/,
  /^(POST|PATCH|PUT) (events\.k8s\.io)?\/events$/,
  /^POST \/serviceaccounts\/token$/,
  /^\w+ \/configmaps$/,
  /^\w+ \/secrets$/,
];

/** `after - before` per pod; `nodeSide` keeps the series matching a kubelet's per-pod calls. */
export function perPod(before: CallCounts, after: CallCounts, pods: number): ApiCallsPerPod {
  const r = (v: number) => Math.round(v * 100) / 100;
  const diff = Object.entries(after)
    .map(([k, v]) => [k, v - (before[k] ?? 0)] as const)
    .filter(([, d]) => d > 0)
    .sort((a, b) => b[1] - a[1]);
  const all = Object.fromEntries(diff.map(([k, d]) => [k, r(d / pods)]));
  const nodeSide = Object.fromEntries(diff.filter(([k]) => NODE_SIDE.some((re) => re.test(k))).map(([k, d]) => [k, r(d / pods)]));
  const refused = Object.fromEntries(
    diff.filter(([k]) => / [45]\d\d$/.test(k) && NODE_SIDE.some((re) => re.test(k.slice(0, k.lastIndexOf(' '))))).map(([k, d]) => [k, d]),
  );
  return { pods, all, nodeSide, nodeSideTotal: r(Object.values(nodeSide).reduce((a, b) => a + b, 0)), refused };
}

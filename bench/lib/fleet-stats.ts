/**
 * The fleet figure's arithmetic: its `--nodes` argument, requests by flow schema from the
 * apiserver's API Priority and Fairness metric, and per-node shares of a fleet's totals.
 *
 * `apiserver_request_total` carries no client identity; `apiserver_flowcontrol_dispatched_requests_total`
 * does, through the FlowSchema a request matched: every request a node makes with its node identity
 * (group system:nodes) matches `system-node-high` (its Node, Lease) or `system-nodes` (the rest), and the
 * bench gives kwok an identity of its own with a FlowSchema of its own. One fleet runs at a time, so
 * those schemas' counts are that fleet's requests.
 */

/** The node counts of `--nodes N[,M...]` / `--nodes=N[,M...]` in `argv`; `fallback` without the flag. Throws on a malformed value. */
export function parseNodeCounts(argv: readonly string[], fallback: readonly number[] = [10, 50]): number[] {
  const i = argv.findIndex((a) => a === '--nodes' || a.startsWith('--nodes='));
  if (i < 0) return [...fallback];
  const raw = argv[i] === '--nodes' ? argv[i + 1] : argv[i]!.slice('--nodes='.length);
  if (raw === undefined || raw === '' || raw.startsWith('--')) throw new Error('--nodes needs a value: --nodes 50 or --nodes 10,50');
  return raw.split(',').map((v) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--nodes: "${v}" is not a positive whole number of nodes`);
    return n;
  });
}

/** The node kinds the fleet figure compares, in the order it runs them. */
export const FLEET_KINDS = ['nodelet', 'hollow', 'kwok'] as const;

/** `--kinds=a,b` in `argv` (default every kind of {@link FLEET_KINDS}); throws on an unknown kind. */
export function parseFleetKinds(argv: readonly string[]): Array<(typeof FLEET_KINDS)[number]> {
  const raw = argv.find((a) => a.startsWith('--kinds='))?.slice('--kinds='.length);
  if (raw === undefined) return [...FLEET_KINDS];
  return raw.split(',').map((k) => {
    const kind = FLEET_KINDS.find((x) => x === k);
    if (!kind) throw new Error(`--kinds: "${k}" is not one of ${FLEET_KINDS.join(', ')}`);
    return kind;
  });
}

/** `--<name>=S` seconds in `argv` as ms (`fallbackMs` without it); throws unless S is a number ≥ 0. */
export function parseSecondsMs(argv: readonly string[], name: string, fallbackMs: number): number {
  const raw = argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  if (raw === undefined) return fallbackMs;
  const s = Number(raw);
  if (raw === '' || !Number.isFinite(s) || s < 0) throw new Error(`--${name}: "${raw}" is not a number of seconds`);
  return Math.round(s * 1000);
}

/** Parses `apiserver_flowcontrol_dispatched_requests_total` lines of a Prometheus text exposition into requests by flow schema. */
export function parseDispatchedByFlowSchema(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^apiserver_flowcontrol_dispatched_requests_total\{(.*)\} (\S+)/.exec(line);
    if (!m) continue;
    const fs = /(?:^|,)flow_schema="((?:[^"\\]|\\.)*)"/.exec(m[1]!)?.[1];
    if (fs === undefined) continue;
    out[fs] = (out[fs] ?? 0) + Number(m[2]);
  }
  return out;
}

/** Requests dispatched between two scrapes under `schemas` (every schema when omitted). */
export function dispatchedBetween(before: Record<string, number>, after: Record<string, number>, schemas?: readonly string[]): number {
  return (schemas ?? Object.keys(after)).reduce((sum, s) => sum + Math.max(0, (after[s] ?? 0) - (before[s] ?? 0)), 0);
}

/** `total / nodes`, rounded to `digits` decimals (NaN without nodes). */
export function perNode(total: number, nodes: number, digits = 2): number {
  if (!(nodes > 0) || !Number.isFinite(total)) return Number.NaN;
  const f = 10 ** digits;
  return Math.round((total / nodes) * f) / f;
}

/** Requests per second per node: `requests` over `seconds`, divided among `nodes` (rounded to 0.001). */
export function perNodeRate(requests: number, seconds: number, nodes: number): number {
  return seconds > 0 ? perNode(requests / seconds, nodes, 3) : Number.NaN;
}

/** How many pods each node holds (`nodeName` of each pod; unbound ones left out): the fewest and the most, over `nodes`. */
export function podsPerNode(podNodes: ReadonlyArray<string | undefined>, nodes: readonly string[]): { min: number; max: number } {
  const count = new Map(nodes.map((n) => [n, 0]));
  for (const n of podNodes) if (n !== undefined && count.has(n)) count.set(n, count.get(n)! + 1);
  const v = [...count.values()];
  return { min: v.length ? Math.min(...v) : 0, max: v.length ? Math.max(...v) : 0 };
}

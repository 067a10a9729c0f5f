/**
 * How soon an endpoint change reaches new connections, on the real control plane and nodelet:
 * two hello-http backend pods (a, b) and a hello-http client pod; a Service without selector
 * whose one EndpointSlice the bench writes itself, naming a or b. Each round the bench replaces
 * the slice to name the other pod and, from just before the write, asks the client to fetch the
 * ClusterIP again and again (each fetch is a new outgoing request, routed afresh) until the
 * answer comes from the new pod: that time is the figure. A watch on the slices in the bench
 * process records when the API delivered the change, for scale (the part that is not nodelet's).
 * Then the cost of the route on a request: the client fetching by ClusterIP against fetching the
 * pod IP directly, one of each in turn.
 */
import * as k8s from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import { Agent, request } from 'undici';
import type { Clients } from './env.ts';

/** Percentiles in ms. */
export interface Millis {
  readonly p50: number;
  readonly p90: number;
  readonly max: number;
  readonly n: number;
}

/** What {@link measureEndpointFlips} returns. */
export interface FlipResult {
  /** Slice write (before the call) → the first answer from the new endpoint through the client pod. */
  readonly toNewConnections: Millis;
  /** Slice write → the change seen by a watch in the bench process. */
  readonly apiWatch: Millis;
  /** A client fetch (component → outgoing request → backend), by ClusterIP and by pod IP, in ms. */
  readonly fetch: { readonly byClusterIP: Millis; readonly byPodIP: Millis };
}

const millis = (samples: number[]): Millis => {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => Math.round(s[Math.min(s.length - 1, Math.floor(q * s.length))]! * 10) / 10;
  return { p50: at(0.5), p90: at(0.9), max: at(1), n: s.length };
};

const TOLERATION = { key: 'kubernetes.io/arch', operator: 'Equal', value: 'wasm32-wasi', effect: 'NoSchedule' };

/** Runs the rounds in namespace `ns` (made by the caller) on node `nodeName` with the hello-http image. */
export async function measureEndpointFlips(
  c: Clients,
  o: { ns: string; nodeName: string; image: string; rounds: number; fetches: number },
): Promise<FlipResult> {
  const discovery = c.kc.makeApiClient(k8s.DiscoveryV1Api);
  const agent = new Agent({ keepAliveTimeout: 10_000, headersTimeout: 30_000, bodyTimeout: 30_000 });
  const pod = (name: string, env: boolean) =>
    c.core.createNamespacedPod({
      namespace: o.ns,
      body: {
        metadata: { name },
        spec: {
          nodeName: o.nodeName,
          tolerations: [TOLERATION],
          containers: [{ name: 'main', image: o.image, ports: [{ containerPort: 8080 }], env: env ? [{ name: 'POD_NAME', value: name }] : [] }],
        },
      },
    });
  await Promise.all([pod('a', true), pod('b', true), pod('client', false)]);
  const ready = async (name: string): Promise<string> => {
    for (const end = Date.now() + 120_000; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
      const p: V1Pod = await c.core.readNamespacedPod({ name, namespace: o.ns });
      if (p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') && p.status.podIP) return p.status.podIP;
    }
    throw new Error(`pod ${name} not Ready within 120 s`);
  };
  const ip = { a: await ready('a'), b: await ready('b'), client: await ready('client') };
  const svc = await c.core.createNamespacedService({
    namespace: o.ns,
    body: { metadata: { name: 'flip' }, spec: { ports: [{ port: 80, targetPort: 8080 }] } },
  });
  const vip = svc.spec!.clusterIP!;
  const slice = (to: 'a' | 'b'): k8s.V1EndpointSlice => ({
    metadata: { name: 'flip-1', labels: { 'kubernetes.io/service-name': 'flip', 'endpointslice.kubernetes.io/managed-by': 'nodelet-bench' } },
    addressType: 'IPv4',
    ports: [{ name: '', port: 8080, protocol: 'TCP' }],
    endpoints: [{ addresses: [ip[to]], conditions: { ready: true } }],
  });
  const fetchVia = async (target: string) => (await request(`http://${ip.client}:8080/fetch/${target}/`, { dispatcher: agent })).body.text();

  // The bench's own watch on the slices: when the API delivered each write.
  const seen: { to: string; at: number }[] = [];
  const watch = await new k8s.Watch(c.kc).watch(
    `/apis/discovery.k8s.io/v1/namespaces/${o.ns}/endpointslices`,
    {},
    (_type, obj: k8s.V1EndpointSlice) => seen.push({ to: obj.endpoints?.[0]?.addresses?.[0] ?? '', at: performance.now() }),
    () => undefined,
  );
  await discovery.createNamespacedEndpointSlice({ namespace: o.ns, body: slice('a') });
  for (const end = Date.now() + 30_000; !(await fetchVia(`${vip}:80`)).includes('hello from a');) {
    if (Date.now() > end) throw new Error('the Service never answered from pod a');
  }

  const flips: number[] = [];
  const api: number[] = [];
  let at: 'a' | 'b' = 'a';
  for (let i = 0; i < o.rounds; i++) {
    const to: 'a' | 'b' = at === 'a' ? 'b' : 'a';
    const t0 = performance.now();
    const write = discovery.replaceNamespacedEndpointSlice({ name: 'flip-1', namespace: o.ns, body: slice(to) });
    for (;;) {
      if ((await fetchVia(`${vip}:80`)).includes(`hello from ${to}`)) break;
      if (performance.now() - t0 > 30_000) throw new Error(`round ${i}: pod ${to} never answered`);
    }
    flips.push(performance.now() - t0);
    await write;
    for (const end = Date.now() + 5000; !seen.some((s) => s.to === ip[to] && s.at >= t0) && Date.now() < end;) await new Promise((r) => setTimeout(r, 5));
    const s = seen.find((x) => x.to === ip[to] && x.at >= t0);
    if (s) api.push(s.at - t0);
    at = to;
    await new Promise((r) => setTimeout(r, 200));
  }
  watch.abort();

  // Interleaved, one of each in turn, so that load on the machine falls on both alike.
  const byVip: number[] = [];
  const byIp: number[] = [];
  for (let i = 0; i < o.fetches + 20; i++) {
    for (const [target, out] of [
      [`${vip}:80`, byVip],
      [`${ip[at]}:8080`, byIp],
    ] as const) {
      const t = performance.now();
      const body = await fetchVia(target);
      if (!body.startsWith('fetched 200')) throw new Error(`fetch ${target}: ${body}`);
      if (i >= 20) out.push(performance.now() - t);
    }
  }
  const byClusterIP = millis(byVip);
  const byPodIP = millis(byIp);
  await agent.close();
  return { toNewConnections: millis(flips), apiWatch: millis(api), fetch: { byClusterIP, byPodIP } };
}

/**
 * Wasm HTTP services end to end: an instance per request, concurrent, contained. One pod runs
 * the http-state component (test/fixtures/components, cargo wasm32-wasip2) and is reached on its
 * pod IP (127.0.0.1 when the node has no pod network): a counter in the instance's memory answers
 * 1 to every request (no state survives a request); 32 requests that each sleep 200 ms are served
 * at once (all answered within a second); a 100 KiB body is echoed byte for byte; a request whose
 * component traps answers 500 while 20 requests sent with it answer 200, and the container is not
 * restarted; and nodelet's /metrics counts the requests by code, their durations, the traps,
 * the requests in flight and the live instances, per namespace, pod and container. A trap is
 * written to the container's log, with the component's own panic message. Two more pods of the
 * same image, bounded by annotations: one with a 100 ms request timeout ends a 200 ms request with
 * 500 and keeps serving (the timeout counted on /metrics and logged); one allowed a single
 * instance at once serves 8 requests sent together as 1 running + 4 queued, and refuses the other
 * 3 with 503 (counted on /metrics).
 * nodelet runs in a network namespace of the test's own: the pod IPs exist only there, and the
 * test's requests reach them over connections made from inside (test/harness/test-network.ts).
 */
import { randomBytes } from 'node:crypto';
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { Agent, request, type buildConnector, type Dispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../harness/ports.ts';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { until } from '../harness/until.ts';
import { pushComponent, WASM_TOLERATION } from './support/images.ts';
import { adminClients, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { kubeletGet } from './support/kubelet-api.ts';
import { kubectl } from './support/kubectl.ts';
import { startIsolatedNodelet, type NodeletProcess } from './support/nodelet-process.ts';
import { netnsUnavailable, type TestHost } from '../harness/test-network.ts';

const unavailable = netnsUnavailable();

/** What a request got: its status and body, or status 0 and the connection error. */
interface Answer {
  status: number;
  body: Buffer;
  error?: string;
}

/** One sample of the Prometheus text format: its name, labels and value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a /metrics text (comments skipped). */
function samples(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The samples named `name` whose labels include `labels`. */
function matching(text: string, name: string, labels: Record<string, string>): Sample[] {
  return samples(text).filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** The sum of the samples named `name` whose labels include `labels` (undefined when there is none). */
function total(text: string, name: string, labels: Record<string, string>): number | undefined {
  const found = matching(text, name, labels);
  return found.length === 0 ? undefined : found.reduce((sum, s) => sum + s.value, 0);
}

describe.skipIf(unavailable !== undefined)(
  `Wasm HTTP services: an instance per request, concurrent, contained (skipped where the machine ${unavailable ?? 'lacks CAP_NET_ADMIN'})`,
  () => {
    const info = inject('cluster');
    const k = adminClients(info);
    const nodeName = 'http-instances-n1';
    const podName = 'state';
    /** A pod whose requests are ended after 100 ms (wasi.nodelet.dev/http-request-timeout). */
    const timeoutPod = 'timeout';
    /** A pod served by one instance at once (wasi.nodelet.dev/http-max-concurrency). */
    const overloadPod = 'overload';
    const container = 'main';
    let nodelet: NodeletProcess & { host: TestHost };
    let reg: TestRegistry;
    let ns: string;
    let base: string;
    let timeoutBase: string;
    let overloadBase: string;
    /** undici's connections, made from inside the node's network namespace. */
    const viaNode: buildConnector.connector = (opts, cb) => {
      nodelet.host.dial({ host: opts.hostname, port: Number(opts.port) }).then(
        (s) => cb(null, s),
        (e: Error) => cb(e, null),
      );
    };
    // Keep-alive connections, as many at once as the test asks for; generous timeouts so a slow
    // answer fails an assertion below instead of the request.
    const agent = new Agent({ connect: viaNode, keepAliveTimeout: 10_000, headersTimeout: 60_000, bodyTimeout: 60_000 });
    // For the overload pod: 8 connections at once, one request each, so 8 requests sent together
    // all reach the server while the first one is still running.
    const overloadAgent = new Agent({
      connect: viaNode,
      connections: 8,
      pipelining: 1,
      keepAliveTimeout: 10_000,
      headersTimeout: 60_000,
      bodyTimeout: 60_000,
    });
    /** Answers received, by status: what nodelet's request counters must have counted at least. */
    const answered = new Map<number, number>();

    /** Sends one request to `url`; a connection error is an answer with status 0 (so a batch's assertions show it). */
    const ask = async (url: string, init: { method?: 'GET' | 'POST'; body?: Buffer } = {}, dispatcher: Dispatcher = agent): Promise<Answer> => {
      try {
        const res = await request(url, { method: init.method ?? 'GET', body: init.body, dispatcher });
        const body = Buffer.from(await res.body.arrayBuffer());
        return { status: res.statusCode, body };
      } catch (e) {
        return { status: 0, body: Buffer.alloc(0), error: String(e) };
      }
    };
    /** Sends one request to the first pod, counting its answer. */
    const send = async (path: string, init: { method?: 'GET' | 'POST'; body?: Buffer } = {}): Promise<Answer> => {
      const a = await ask(`${base}${path}`, init);
      if (a.status !== 0) answered.set(a.status, (answered.get(a.status) ?? 0) + 1);
      return a;
    };
    const text = (a: Answer) => a.error ?? a.body.toString('utf8');
    const metrics = async () => {
      const r = await kubeletGet(nodelet.port, '/metrics', info.caCert, { cert: info.kubeletClientCert, key: info.kubeletClientKey });
      expect(r.status).toBe(200);
      return r.body;
    };
    /**
     * Scrapes /metrics until `ready` holds of the text (at most 10 s: a request is counted when it
     * ends inside nodelet, which may be just after the client has its answer), and returns the last
     * scrape either way, so the assertions made on it name what is missing.
     */
    const scrapeUntil = async (ready: (t: string) => boolean): Promise<string> => {
      let last = '';
      await until('a /metrics scrape with the counts', async () => ready((last = await metrics())), 10_000).catch(() => undefined);
      return last;
    };
    const readPod = (name = podName) => k.core.readNamespacedPod({ name, namespace: ns });
    const isReady = (p: V1Pod) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    /**
     * The lines of pod `name`'s container log (kubectl logs) once `ready` holds of them (at most 10 s:
     * the container's log is written after the answer is sent), or the last ones read, so the
     * assertions made on them show what is there.
     */
    const logsUntil = async (name: string, ready: (lines: string[]) => boolean): Promise<string[]> => {
      let last: ReturnType<typeof kubectl> = { status: null, stdout: '', stderr: 'kubectl was not run' };
      const lines = () => last.stdout.split('\n');
      await until(
        `the log of ${name}`,
        () => {
          last = kubectl(info, ['logs', '-n', ns, name, '-c', container]);
          return last.status === 0 && ready(lines());
        },
        10_000,
      ).catch(() => undefined);
      expect(last.status, `kubectl logs ${name}: ${last.stderr}`).toBe(0);
      return lines();
    };
    /** Creates pod `name` of `image` on the node with `annotations`, waits for it Ready; its base URL. */
    const runPod = async (name: string, image: string, annotations?: Record<string, string>): Promise<string> => {
      const port = await freePort();
      await k.core.createNamespacedPod({
        namespace: ns,
        body: {
          metadata: { name, annotations },
          spec: {
            nodeName,
            tolerations: [WASM_TOLERATION],
            restartPolicy: 'Always',
            containers: [{ name: container, image, ports: [{ containerPort: port }] }],
          } as V1PodSpec,
        },
      });
      const pod = await podUntil(k.core, ns, name, 'Ready', isReady, 120_000);
      // No pod network on this node unless it has a pod CIDR: the component listens on 127.0.0.1 then.
      const host = pod.status?.podIP && pod.status.podIP !== '127.0.0.1' ? pod.status.podIP : '127.0.0.1';
      return `http://${host}:${port}`;
    };

    beforeAll(async () => {
      reg = await startRegistry();
      const image = await pushComponent(reg, 'http-state');
      nodelet = await startIsolatedNodelet(info, nodeName, { forward: [Number(new URL(reg.url).port)] });
      ns = await podNamespace(k.core, 'http-instances');
      await waitNodeReady(k.core, nodeName);
      [base, timeoutBase, overloadBase] = await Promise.all([
        runPod(podName, image),
        runPod(timeoutPod, image, { 'wasi.nodelet.dev/http-request-timeout': '100ms' }),
        runPod(overloadPod, image, { 'wasi.nodelet.dev/http-max-concurrency': '1' }),
      ]);
      await until('the component answers', async () => (await send('/')).status === 200, 30_000);
      await until('the timeout pod answers', async () => (await ask(`${timeoutBase}/`)).status === 200, 30_000);
      await until('the overload pod answers', async () => (await ask(`${overloadBase}/`, {}, overloadAgent)).status === 200, 30_000);
    }, 600_000);
    afterAll(async () => {
      await agent.close();
      await overloadAgent.close();
      await nodelet?.dispose();
      await reg?.stop();
    });

    it('a counter in the instance answers 1 to each of two requests in a row: no state survives a request', async () => {
      const first = await send('/count');
      expect([first.status, text(first)]).toEqual([200, '1']);
      const second = await send('/count');
      expect([second.status, text(second)]).toEqual([200, '1']);
    });

    it('32 requests that each sleep 200 ms are served at once: all answer 200 `slept` within 1000 ms', async () => {
      const start = performance.now();
      const answers = await Promise.all(Array.from({ length: 32 }, () => send('/sleep')));
      const elapsed = performance.now() - start;
      expect(answers.map((a) => `${a.status} ${text(a)}`)).toEqual(Array(32).fill('200 slept'));
      // One at a time they would take 32 × 200 ms = 6.4 s.
      expect(elapsed, `32 concurrent /sleep took ${Math.round(elapsed)} ms`).toBeLessThan(1000);
    });

    it('a 100 KiB POST body is echoed byte for byte', async () => {
      const sent = randomBytes(100 * 1024);
      const got = await send('/echo', { method: 'POST', body: sent });
      expect(got.status, got.error).toBe(200);
      expect(got.body.length).toBe(sent.length);
      expect(got.body.equals(sent)).toBe(true);
    });

    it('a trap ends only its own request with 500: 20 requests sent with it answer 200, the container is not restarted, the pod stays Ready', async () => {
      const [boom, ...others] = await Promise.all([send('/boom'), ...Array.from({ length: 20 }, () => send('/'))]);
      expect.soft(boom!.status, text(boom!)).toBe(500);
      expect.soft(others.map((a) => `${a.status} ${text(a)}`)).toEqual(Array(20).fill('200 hello'));
      const after = await send('/');
      expect([after.status, text(after)]).toEqual([200, 'hello']);
      const pod = await readPod();
      expect(pod.status?.containerStatuses?.[0]?.restartCount).toBe(0);
      expect(isReady(pod), JSON.stringify(pod.status?.conditions)).toBe(true);
    });

    it('/metrics counts the requests by code, their durations, the traps, the requests in flight and the instances of the container', async () => {
      const labels = { namespace: ns, pod: podName, container };
      const ok = answered.get(200) ?? 0;
      const requests = (t: string, code: string) => total(t, 'nodelet_container_http_requests_total', { ...labels, code });
      const byCode = (t: string) => matching(t, 'nodelet_container_http_requests_total', labels).reduce((sum, s) => sum + s.value, 0);
      const inFlight = (t: string) => total(t, 'nodelet_container_http_requests_in_flight', labels);
      const m = await scrapeUntil(
        (t) =>
          (requests(t, '200') ?? 0) >= ok &&
          (requests(t, '500') ?? 0) >= 1 &&
          total(t, 'nodelet_container_http_request_duration_seconds_count', labels) === byCode(t) &&
          inFlight(t) === 0,
      );
      expect(ok).toBeGreaterThan(0);
      for (const name of [
        'nodelet_container_http_requests_total',
        'nodelet_container_http_request_duration_seconds_bucket',
        'nodelet_container_http_request_duration_seconds_sum',
        'nodelet_container_http_request_duration_seconds_count',
        'nodelet_container_http_traps_total',
        'nodelet_container_http_requests_in_flight',
        'nodelet_container_http_instances',
      ]) {
        expect(matching(m, name, labels).length, `${name} of ${ns}/${podName}/${container} in /metrics`).toBeGreaterThan(0);
      }
      expect(requests(m, '200'), 'requests_total{code="200"}').toBeGreaterThanOrEqual(ok);
      expect(requests(m, '500'), 'requests_total{code="500"}').toBeGreaterThanOrEqual(1);
      // A histogram: buckets (one of them +Inf, holding every request), a sum and a count.
      expect(matching(m, 'nodelet_container_http_request_duration_seconds_bucket', labels).some((s) => s.labels.le !== undefined)).toBe(true);
      expect(total(m, 'nodelet_container_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(byCode(m));
      expect(total(m, 'nodelet_container_http_request_duration_seconds_sum', labels)).toBeGreaterThan(0);
      expect(total(m, 'nodelet_container_http_request_duration_seconds_count', labels), 'duration _count = requests_total over codes').toBe(byCode(m));
      expect(total(m, 'nodelet_container_http_traps_total', labels), 'traps_total').toBeGreaterThanOrEqual(1);
      expect(inFlight(m), 'requests_in_flight when idle').toBe(0);
      expect(total(m, 'nodelet_container_http_instances', labels), 'instances').toBeGreaterThanOrEqual(0);

      // The counters keep counting: 10 more requests, scraped again.
      const before = requests(m, '200') ?? 0;
      const more = await Promise.all(Array.from({ length: 10 }, () => send('/')));
      expect(more.map((a) => a.status)).toEqual(Array(10).fill(200));
      const again = await scrapeUntil((t) => (requests(t, '200') ?? 0) >= before + 10);
      expect(requests(again, '200'), 'requests_total{code="200"} after 10 more').toBeGreaterThanOrEqual(before + 10);
      // The trap counted above ended no container.
      expect((await readPod()).status?.containerStatuses?.[0]?.restartCount).toBe(0);
    });

    it("a trap is written to the container's log, with the component's own panic message `boom` (its stderr)", async () => {
      const boom = await send('/boom');
      expect(boom.status, text(boom)).toBe(500);
      // nodelet's line names the request; the component's panic message is a line of its own stderr.
      const trapped = (l: string) => l.includes('GET /boom: the component trapped');
      const panicked = (l: string) => l.includes('boom') && !l.includes('nodelet: ');
      const lines = await logsUntil(podName, (ls) => ls.some(trapped) && ls.some(panicked));
      expect(lines.filter(trapped), lines.join('\n')).not.toHaveLength(0);
      expect(lines.filter(panicked), lines.join('\n')).not.toHaveLength(0);
    });

    it('a request still running at the 100 ms request timeout is ended with 500: the pod keeps serving, is not restarted, stays Ready; the timeout is counted and logged', async () => {
      const t0 = performance.now();
      const slow = await ask(`${timeoutBase}/sleep`);
      const ms = Math.round(performance.now() - t0);
      // /sleep takes 200 ms: 200 `slept` means the timeout did not end it.
      expect(slow.status, `${text(slow)} after ${ms} ms`).toBe(500);
      expect(text(slow)).not.toBe('slept');
      const after = await ask(`${timeoutBase}/count`);
      expect([after.status, text(after)]).toEqual([200, '1']);
      const pod = await readPod(timeoutPod);
      expect(pod.status?.containerStatuses?.[0]?.restartCount).toBe(0);
      expect(isReady(pod), JSON.stringify(pod.status?.conditions)).toBe(true);

      const labels = { namespace: ns, pod: timeoutPod, container };
      const timeouts = (t: string) => total(t, 'nodelet_container_http_request_timeouts_total', labels);
      const failed = (t: string) => total(t, 'nodelet_container_http_requests_total', { ...labels, code: '500' });
      const m = await scrapeUntil((t) => (timeouts(t) ?? 0) >= 1 && (failed(t) ?? 0) >= 1);
      expect(timeouts(m), 'request_timeouts_total').toBeGreaterThanOrEqual(1);
      expect(failed(m), 'requests_total{code="500"}').toBeGreaterThanOrEqual(1);
      // A timeout is counted as such, not as a trap.
      expect(total(m, 'nodelet_container_http_traps_total', labels), 'traps_total').toBe(0);

      const timedOut = (l: string) => l.includes('GET /sleep') && l.includes('request timeout of 100 ms');
      const lines = await logsUntil(timeoutPod, (ls) => ls.some(timedOut));
      expect(lines.filter(timedOut), lines.join('\n')).not.toHaveLength(0);
    });

    it('one instance at once: of 8 requests sent together 5 answer 200 (1 running + a queue of 4) and 3 answer 503, counted; the pod then serves again', async () => {
      const t0 = performance.now();
      const answers = await Promise.all(Array.from({ length: 8 }, () => ask(`${overloadBase}/sleep`, {}, overloadAgent)));
      const ms = Math.round(performance.now() - t0);
      const got = answers.map((a) => (a.status === 503 ? '503' : `${a.status} ${text(a)}`)).sort();
      expect(got, `after ${ms} ms`).toEqual([...Array<string>(5).fill('200 slept'), ...Array<string>(3).fill('503')]);
      // One at a time, the 5 served take 5 × 200 ms; served at once they would take ~200 ms.
      expect(ms, 'the 5 requests served took').toBeGreaterThanOrEqual(950);

      const labels = { namespace: ns, pod: overloadPod, container };
      const overloaded = (t: string) => total(t, 'nodelet_container_http_overloaded_total', labels);
      const refused = (t: string) => total(t, 'nodelet_container_http_requests_total', { ...labels, code: '503' });
      const m = await scrapeUntil((t) => (overloaded(t) ?? 0) >= 3 && (refused(t) ?? 0) >= 3);
      expect(overloaded(m), 'overloaded_total').toBeGreaterThanOrEqual(3);
      expect(refused(m), 'requests_total{code="503"}').toBeGreaterThanOrEqual(3);

      const next = await ask(`${overloadBase}/sleep`, {}, overloadAgent);
      expect([next.status, text(next)]).toEqual([200, 'slept']);
    });
  },
);

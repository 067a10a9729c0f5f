/**
 * One pod's failure stays in that pod: 20 innocent BestEffort pods printing a line every second
 * run in the WASI runtime process (nodelet's default) while hostile pods start beside them — deep
 * recursion, a trap, a 4 GiB memory, a module holding every descriptor it can, a start section
 * that never returns, 1 GB written to stdout, 1 GiB allocated under a 1Gi limit, and a module
 * computing forever without a WASI call (deleted at the end, it ends alone). Throughout:
 * no innocent pod restarts or goes more than 3 s without a line, the kubelet API answers `/pods`
 * within a second, and every hostile pod ends with its own precise reason; then 60 failing modules
 * started at once each report their own outcome. (The 1 GB writer shares
 * a thread with innocent pods: it yields the thread at its WASI calls every 20 ms of running; the
 * busy module at its preemption points.)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { parseCriLine } from '@nodelet/plugin-api/v1/toolkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BODIES, wasmModule } from '../fuzz/wasm-encoder.ts';
import { pushWasmArtifact } from '../harness/oci-push.ts';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { START_LOOP_MODULE } from '../harness/wasm-modules.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, waitNodeReady } from './support/kube.ts';
import { kubeletGet } from './support/kubelet-api.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

const INNOCENT = 20;
/** How long the hostile pods run beside the innocent ones before the logs are read. */
const WINDOW_MS = 45_000;

describe('fault isolation in the WASI runtime', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'isolation-n1';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  const img: Record<string, string> = {};

  beforeAll(async () => {
    reg = await startRegistry();
    for (const m of ['sleep', 'fd-hog', 'spew', 'alloc', 'loop']) img[m] = await pushModule(reg, m);
    const push = async (name: string, bytes: Uint8Array) => {
      await pushWasmArtifact(reg.host, name, 'v1', Buffer.from(bytes), { format: 'cncf' });
      img[name] = `${reg.host}/${name}:v1`;
    };
    await push('recursion', wasmModule({ start: BODIES.recurse(0) }));
    await push('trap', wasmModule({ start: BODIES.trap() }));
    await push('memory-4g', wasmModule({ start: BODIES.ok(), memory: { min: 65_536 } }));
    await push('start-loop', START_LOOP_MODULE);
    nodelet = await startNodelet(info, nodeName, [], 'issued', { NODELET_WASI_RUNTIME: 'external' });
    ns = await podNamespace(k.core, 'isolation');
    await waitNodeReady(k.core, nodeName);
  });
  afterAll(async () => {
    await nodelet?.dispose();
    await reg?.stop();
  });

  const create = (name: string, spec: Partial<V1PodSpec>) =>
    k.core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name }, spec: { nodeName, tolerations: [WASM_TOLERATION], containers: [], ...spec } as V1PodSpec },
    });
  const get = (name: string) => k.core.readNamespacedPod({ namespace: ns, name });
  const main = (p: V1Pod) => p.status?.containerStatuses?.[0];
  /** Timestamps (ms) of the stdout lines of a pod's first log file. */
  const lineTimes = (p: V1Pod) =>
    readFileSync(join(nodelet.rootDir, 'logs', 'pods', `${ns}_${p.metadata!.name}_${p.metadata!.uid}`, 'main', '0.log'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => parseCriLine(l)!)
      .filter((r) => r.stream === 'stdout')
      .map((r) => Date.parse(r.time));

  it(`${INNOCENT} innocent pods run on unharmed beside hostile pods`, async () => {
    const innocents = Array.from({ length: INNOCENT }, (_, i) => `innocent-${i}`);
    for (const name of innocents) await create(name, { containers: [{ name: 'main', image: img.sleep, args: ['3600'] }] });
    await eventually(
      'innocent pods running',
      async () => {
        const pods = await Promise.all(innocents.map(get));
        return pods.every((p) => main(p)?.state?.running) || undefined;
      },
      180_000,
    );
    // The kubelet API is probed all along: /pods must answer within a second.
    let probing = true;
    let slowestMs = 0;
    const probe = (async () => {
      while (probing) {
        const t0 = performance.now();
        const r = await kubeletGet(nodelet.port, '/pods', info.caCert, { cert: info.kubeletClientCert, key: info.kubeletClientKey });
        expect(r.status).toBe(200);
        slowestMs = Math.max(slowestMs, performance.now() - t0);
        await new Promise((r) => setTimeout(r, 250)); // one probe every quarter second
      }
    })();
    const start = Date.now();
    const never = { restartPolicy: 'Never' as const };
    await create('recursion', { ...never, containers: [{ name: 'main', image: img.recursion }] });
    await create('trap', { ...never, containers: [{ name: 'main', image: img.trap }] });
    await create('memory-4g', { ...never, containers: [{ name: 'main', image: img['memory-4g'] }] });
    await create('fd-hog', { ...never, containers: [{ name: 'main', image: img['fd-hog'], args: ['hog-hold', '/dev/null'] }] });
    await create('start-loop', { ...never, containers: [{ name: 'main', image: img['start-loop'] }] });
    await create('spew', { ...never, containers: [{ name: 'main', image: img.spew, args: ['1000'] }] });
    await create('alloc', { ...never, containers: [{ name: 'main', image: img.alloc, args: ['64'], resources: { limits: { memory: '1Gi' } } }] });
    // computes without a WASI call, forever (BestEffort: on a shared thread, with preemption points)
    await create('busy', { ...never, containers: [{ name: 'main', image: img.loop }] });
    await new Promise((r) => setTimeout(r, WINDOW_MS)); // the hostile pods run beside the innocent ones
    const end = Date.now();
    probing = false;
    await probe;

    const gaps: string[] = [];
    for (const name of innocents) {
      const p = await get(name);
      expect(main(p)?.restartCount, name).toBe(0);
      expect(main(p)?.state?.running, name).toBeDefined();
      const times = [start, ...lineTimes(p).filter((t) => t >= start && t <= end), end];
      const gap = Math.max(...times.slice(1).map((t, i) => t - times[i]!));
      if (gap > 3000) gaps.push(`${name}: ${gap} ms without a line`);
    }
    console.log(`kubelet API /pods slowest ${Math.round(slowestMs)} ms; innocent pods with a gap over 3 s: ${gaps.length ? gaps.join(', ') : 'none'}`);
    expect(gaps).toEqual([]);
    expect(slowestMs).toBeLessThan(1000);

    // Each hostile pod ends with its own precise reason.
    const ended = async (name: string) =>
      eventually(
        `${name} ended`,
        async () => {
          const p = await get(name);
          const c = main(p);
          return c?.state?.terminated ?? (c?.state?.waiting?.reason && c.state.waiting.reason !== 'ContainerCreating' ? c.state.waiting : undefined);
        },
        120_000,
      );
    const outcomes = Object.fromEntries(
      await Promise.all(['recursion', 'trap', 'memory-4g', 'start-loop', 'alloc'].map(async (n) => [n, await ended(n)] as const)),
    );
    console.log(JSON.stringify(outcomes, null, 1));
    expect(outcomes.recursion).toMatchObject({
      reason: 'Error',
      exitCode: 134,
      message: expect.stringMatching(/^RangeError: Maximum call stack size exceeded/),
    });
    expect(outcomes.trap).toMatchObject({ reason: 'Error', exitCode: 134, message: expect.stringMatching(/^RuntimeError: unreachable/) });
    // 65,536 pages is the largest memory wasm32 allows, and a valid one: it is reserved, not
    // committed, and the module (which touches none of it) runs to its end, as under wasmtime.
    expect(outcomes['memory-4g']).toMatchObject({ reason: 'Completed', exitCode: 0 });
    expect(outcomes['start-loop']).toMatchObject({ reason: 'CreateContainerError', message: expect.stringContaining('start function') });
    expect(outcomes.alloc).toMatchObject({ reason: 'OOMKilled', exitCode: 137 });

    // Deleting the busy pod ends its module alone: no innocent pod is restarted.
    await k.core.deleteNamespacedPod({ name: 'busy', namespace: ns, gracePeriodSeconds: 0 });
    await eventually('busy pod gone', async () => !(await get('busy').catch(() => undefined)), 30_000);
    await new Promise((r) => setTimeout(r, 2000)); // a restart would show by now
    for (const name of innocents) expect(main(await get(name))?.restartCount, name).toBe(0);
  });

  it('60 failing modules started at once each report their own outcome, whatever the others do', async () => {
    const kinds = [
      { image: 'recursion', expected: { reason: 'Error', exitCode: 134, message: expect.stringMatching(/^RangeError: Maximum call stack size exceeded/) } },
      { image: 'trap', expected: { reason: 'Error', exitCode: 134, message: expect.stringMatching(/^RuntimeError: unreachable/) } },
      { image: 'memory-4g', expected: { reason: 'Completed', exitCode: 0 } },
    ];
    const names = Array.from({ length: 60 }, (_, i) => `burst-${i}`);
    await Promise.all(
      names.map((name, i) => create(name, { restartPolicy: 'Never', containers: [{ name: 'main', image: img[kinds[i % kinds.length]!.image]! }] })),
    );
    const ended = await eventually(
      'every burst pod ended',
      async () => {
        const pods = await Promise.all(names.map(get));
        return pods.every((p) => main(p)?.state?.terminated) ? pods : undefined;
      },
      180_000,
    );
    const wrong = ended.flatMap((p, i) => {
      try {
        expect(main(p)!.state!.terminated).toMatchObject(kinds[i % kinds.length]!.expected);
        return [];
      } catch {
        return [`${p.metadata!.name}: ${JSON.stringify(main(p)!.state!.terminated)}`];
      }
    });
    expect(wrong).toEqual([]);
  });
});

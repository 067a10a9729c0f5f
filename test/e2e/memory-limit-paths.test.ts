/**
 * A memory limit holds on every path a pod can take, in the WASI runtime process (nodelet's
 * default): a module allocating past `limits.memory: 64Mi` ends OOMKilled (137) when its module is
 * compiled for it (a fresh start), when the compiled module comes from the cache (a second pod of
 * the same image), and after nodelet restarted; a wasi:http component served per request sees its
 * allocation of 256 MiB fail — that request answers 500 and the log says it ran out of memory —
 * while the container keeps serving (restartCount 0). nodelet runs in a network namespace of the
 * test's own: the component's pod IP exists only there, and the test's requests come from inside it.
 */
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { freePort } from '../harness/ports.ts';
import { pushComponent, pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, waitNodeReady } from './support/kube.ts';
import { kubectl } from './support/kubectl.ts';
import { startIsolatedNodelet, type NodeletProcess } from './support/nodelet-process.ts';
import { netnsUnavailable, type TestHost } from '../harness/test-network.ts';

const unavailable = netnsUnavailable();

describe.skipIf(unavailable !== undefined)(`a 64Mi memory limit on every path (skipped where the machine ${unavailable ?? 'lacks CAP_NET_ADMIN'})`, () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'memlimit-n1';
  let nodelet: NodeletProcess & { host: TestHost };
  let reg: TestRegistry;
  let ns: string;
  let alloc: string;
  let component: string;
  const limits = { memory: '64Mi' };

  beforeAll(async () => {
    reg = await startRegistry();
    alloc = await pushModule(reg, 'alloc');
    component = await pushComponent(reg, 'http-state');
    nodelet = await startIsolatedNodelet(info, nodeName, { env: { NODELET_WASI_RUNTIME: 'external' }, forward: [Number(new URL(reg.url).port)] });
    ns = await podNamespace(k.core, 'memlimit');
    await waitNodeReady(k.core, nodeName);
  }, 600_000);
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
  /** Runs the allocating module (16 MiB chunks, up to 256 MiB) under the limit; resolves with how it ended. */
  const bomb = async (name: string) => {
    await create(name, { restartPolicy: 'Never', containers: [{ name: 'main', image: alloc, args: ['16'], resources: { limits } }] });
    return eventually(`${name} ended`, async () => main(await get(name))?.state?.terminated, 120_000);
  };

  it('a module: OOMKilled when compiled for the pod, again from the module cache, and after a nodelet restart', async () => {
    for (const t of [await bomb('fresh'), await bomb('cached')]) expect(t).toMatchObject({ reason: 'OOMKilled', exitCode: 137 });
    await nodelet.restart();
    await waitNodeReady(k.core, nodeName);
    expect(await bomb('after-restart')).toMatchObject({ reason: 'OOMKilled', exitCode: 137 });
  });

  it('a component served per request: the allocation fails, that request gets 500, the container serves on', async () => {
    const port = await freePort();
    await create('component', { containers: [{ name: 'main', image: component, ports: [{ containerPort: port }], resources: { limits } }] });
    const pod = await eventually(
      'component Ready',
      async () => {
        const p = await get('component');
        return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? p : undefined;
      },
      180_000,
    );
    // From inside the node's network namespace.
    const ask = (path: string) => nodelet.host.httpGet(pod.status?.podIP ?? '127.0.0.1', port, path);
    expect(await ask('/alloc/8')).toEqual({ status: 200, body: String(8 << 20) });
    expect((await ask('/alloc/256')).status).toBe(500);
    expect(await ask('/count')).toEqual({ status: 200, body: '1' });
    expect(main(await get('component'))?.restartCount).toBe(0);
    const log = await eventually(
      'the out-of-memory line in the log',
      () => {
        const out = kubectl(info, ['logs', '-n', ns, 'component']).stdout;
        return out.includes('GET /alloc/256: ran out of memory') ? out : undefined;
      },
      10_000,
    );
    expect(log).toContain("the container's memory limit was reached (RuntimeError: unreachable");
  });
});

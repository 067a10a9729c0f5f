/**
 * Pressure and eviction end to end: nodelet runs with
 * `--eviction-hard=memory.available<X`, X computed from /proc/meminfo as nodelet
 * computes memory.available (MemFree + Inactive(file)) so that the node is fine
 * until a memory-hungry module (the `grow` fixture, GROW_MIB touched MiB) runs, and
 * under the threshold once it does (half the module's size of margin either way,
 * for the other processes of a shared machine). The BestEffort hog is evicted
 * (Failed/Evicted, upstream's message, a Warning Evicted event) while the
 * Guaranteed pod runs on; the node shows MemoryPressure True (and the controller's
 * memory-pressure taint) then False once the transition period passed.
 *
 * Also: a secret volume is a tmpfs mount (seen in /proc/self/mountinfo: the test
 * shares nodelet's mount namespace) holding the secret, gone when the pod is deleted.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Node, V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { mountsUnder } from '../harness/unmount-under.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventsOnce, condition, eventually, podNamespace, waitNodeReady } from './support/kube.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

const MI = 1024 * 1024;
/**
 * Half of it is the margin either way. The suite's other files run at the same time: with
 * 1024 (a 512 MiB margin) they once took more than the margin while the hog was gone, and the
 * Guaranteed pod was evicted too, as it should be under pressure that lasts.
 */
const GROW_MIB = 1536;

/** memory.available as nodelet observes it: MemFree + Inactive(file). */
function memoryAvailable(): number {
  const text = readFileSync('/proc/meminfo', 'utf8');
  const kb = (f: string) => Number(new RegExp(`^${f.replace(/[()]/g, '\\$&')}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
  return kb('MemFree') + kb('Inactive(file)');
}

describe('memory pressure and eviction', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'pressure-n1';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  let grow: string;
  let sleep: string;
  let threshold: number;

  beforeAll(async () => {
    reg = await startRegistry();
    grow = await pushModule(reg, 'grow');
    sleep = await pushModule(reg, 'sleep');
    threshold = Math.floor((memoryAvailable() - (GROW_MIB / 2) * MI) / MI) * MI;
    nodelet = await startNodelet(info, nodeName, [
      `--eviction-hard=memory.available<${threshold / MI}Mi`,
      '--eviction-pressure-transition-period=15s',
      '--eviction-monitoring-period=1s',
    ]);
    ns = await podNamespace(k.core, 'pressure');
    await waitNodeReady(k.core, nodeName);
  });
  afterAll(async () => {
    await nodelet?.dispose();
    await reg?.stop();
  });

  const spec = (s: Partial<V1PodSpec>): V1PodSpec =>
    ({ tolerations: [WASM_TOLERATION], nodeSelector: { 'kubernetes.io/hostname': nodeName }, terminationGracePeriodSeconds: 1, ...s }) as V1PodSpec;
  const read = (name: string) => k.core.readNamespacedPod({ name, namespace: ns });
  const running = (p: V1Pod) => p.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.state?.running !== undefined;
  const node = () => k.core.readNode({ name: nodeName });

  it('mounts a secret volume as tmpfs holding the secret, and unmounts it when the pod is deleted', async () => {
    await k.core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'creds' }, stringData: { token: 's3cret' } } });
    await k.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'with-secret' },
        spec: spec({
          volumes: [{ name: 'creds', secret: { secretName: 'creds' } }],
          containers: [{ name: 'main', image: sleep, args: ['3600'], volumeMounts: [{ name: 'creds', mountPath: '/creds' }] }],
        }),
      },
    });
    const p = await eventually('secret pod running', async () => ((x) => (running(x) ? x : undefined))(await read('with-secret')), 60_000, 500);
    const dir = join(nodelet.rootDir, 'pods', p.metadata!.uid!, 'volumes', 'kubernetes.io~secret', 'creds');
    const line = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .find((l) => l.split(' ')[4] === dir);
    expect(line).toMatch(/ - tmpfs tmpfs /);
    expect(readFileSync(join(dir, 'token'), 'utf8')).toBe('s3cret');
    await k.core.deleteNamespacedPod({ name: 'with-secret', namespace: ns });
    await eventually('secret tmpfs unmounted', () => mountsUnder(dir).length === 0, 60_000, 500);
    await eventually(
      'secret pod gone',
      async () =>
        (await read('with-secret').then(
          () => false,
          () => true,
        )) as boolean,
      60_000,
      500,
    );
  });

  it('evicts the BestEffort memory hog before the Guaranteed pod; MemoryPressure goes True then False', async () => {
    expect(condition(await node(), 'MemoryPressure')).toMatchObject({ status: 'False', reason: 'KubeletHasSufficientMemory' });
    const resources = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '100m', memory: '64Mi' } };
    await k.core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name: 'guaranteed' }, spec: spec({ containers: [{ name: 'main', image: sleep, args: ['3600'], resources }] }) },
    });
    await eventually('guaranteed pod running', async () => running(await read('guaranteed')), 60_000, 500);
    await k.core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name: 'hog' }, spec: spec({ containers: [{ name: 'main', image: grow, args: [String(GROW_MIB)] }] }) },
    });
    let pressured: V1Node | undefined;
    const evicted = await eventually(
      'hog evicted',
      async () => {
        const n = await node();
        if (condition(n, 'MemoryPressure')?.status === 'True') pressured ??= n;
        const x = await read('hog');
        return x.status?.phase === 'Failed' ? x : undefined;
      },
      120_000,
      500,
    );
    const message = evicted.status?.message ?? '';
    expect(evicted.status?.reason).toBe('Evicted');
    // Quantities in their canonical form, as upstream's resource.Quantity prints them: the largest
    // binary unit that divides the value exactly (an available amount can be a whole number of Mi).
    expect(message).toMatch(
      /^The node was low on resource: memory\. Threshold quantity: \d+(Ki|Mi), available: \d+(Ki|Mi|Gi)?\. Container main was using \d+(Ki|Mi|Gi)?, request is 0, has larger consumption of memory\. $/,
    );
    expect(message).toContain(`Threshold quantity: ${threshold / MI}Mi,`);
    expect(evicted.status?.conditions).toContainEqual(expect.objectContaining({ type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet' }));
    const events = await eventsOnce(k.core, ns, 'involvedObject.name=hog,reason=Evicted');
    expect(events.map((e) => `${e.type} ${e.message}`)).toEqual([`Warning ${message}`]);
    pressured ??= await eventually(
      'MemoryPressure True',
      async () => ((n) => (condition(n, 'MemoryPressure')?.status === 'True' ? n : undefined))(await node()),
      15_000,
      250,
    );
    expect(condition(pressured, 'MemoryPressure')).toMatchObject({
      status: 'True',
      reason: 'KubeletHasInsufficientMemory',
      message: 'kubelet has insufficient memory available',
    });
    // The node-lifecycle controller taints the node from the condition (TaintNodesByCondition).
    await eventually(
      'memory-pressure taint',
      async () => (await node()).spec?.taints?.some((t) => t.key === 'node.kubernetes.io/memory-pressure' && t.effect === 'NoSchedule'),
      15_000,
      250,
    );
    // Pressure over (the hog's memory is gone): False after the 15 s transition period, taint removed.
    const relieved = await eventually(
      'MemoryPressure False',
      async () => ((n) => (condition(n, 'MemoryPressure')?.status === 'False' ? n : undefined))(await node()),
      90_000,
      500,
    );
    expect(condition(relieved, 'MemoryPressure')).toMatchObject({ reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available' });
    await eventually(
      'memory-pressure taint removed',
      async () => !(await node()).spec?.taints?.some((t) => t.key === 'node.kubernetes.io/memory-pressure'),
      30_000,
      500,
    );
    const guaranteed = await read('guaranteed');
    expect(running(guaranteed), `the Guaranteed pod ran on: ${JSON.stringify(guaranteed.status)}`).toBe(true);
  });
});

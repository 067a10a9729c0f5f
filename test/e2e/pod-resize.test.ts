/**
 * In-place pod resize (KEP-1287) and pod observedGeneration against the real control plane:
 * every resize goes through `kubectl patch --subresource resize`, as a user's does, on WASI
 * pods. Each case names the upstream test it is ported from (test/e2e/common/node/pod_resize.go,
 * test/e2e/node/pod_resize.go, test/e2e/node/pods.go) and checks the status shapes of
 * test/e2e/common/node/framework/podresize/resize.go (VerifyPodStatusResources,
 * WaitForPodResizeActuation, ExpectPodResized). What differs from a Linux node: there are no
 * cgroups to read, so the module's own behaviour (memory it can or cannot get) stands for
 * the cgroup checks, and a lowered memory limit can never be below what a module holds
 * (Wasm memories do not shrink).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Container, V1Pod, V1PodSpec, V1ResourceRequirements } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { kubectl } from './support/kubectl.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

/** podresize.ResizableContainerInfo, for one container named c1. */
interface Resources {
  cpu?: string;
  mem?: string;
  cpuLim?: string;
  memLim?: string;
}

/** cgroups.ContainerResources → the container's resources (requests and limits as given). */
function requirements(r: Resources): V1ResourceRequirements {
  const requests: Record<string, string> = {};
  const limits: Record<string, string> = {};
  if (r.cpu) requests.cpu = r.cpu;
  if (r.mem) requests.memory = r.mem;
  if (r.cpuLim) limits.cpu = r.cpuLim;
  if (r.memLim) limits.memory = r.memLim;
  return { ...(Object.keys(limits).length ? { limits } : {}), ...(Object.keys(requests).length ? { requests } : {}) };
}

/** Guaranteed: requests = limits (upstream makeGuaranteedContainers). */
const guaranteed = (cpu: string, mem: string): Resources => ({ cpu, cpuLim: cpu, mem, memLim: mem });

describe('in-place pod resize and observedGeneration', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'resize-n1';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  const img: Record<string, string> = {};

  beforeAll(async () => {
    reg = await startRegistry();
    for (const m of ['grow-on-demand', 'grow', 'sleep']) img[m] = await pushModule(reg, m);
    nodelet = await startNodelet(info, nodeName);
    ns = await podNamespace(k.core, 'resize');
    await waitNodeReady(k.core, nodeName);
  });
  afterAll(async () => {
    await nodelet?.dispose();
    await reg?.stop();
  });

  const container = (image: string, args: string[], r: Resources, policy: { cpu?: string; mem?: string } = {}): V1Container => ({
    name: 'c1',
    image,
    args,
    resources: requirements(r),
    resizePolicy: [
      { resourceName: 'cpu', restartPolicy: policy.cpu ?? 'NotRequired' },
      { resourceName: 'memory', restartPolicy: policy.mem ?? 'NotRequired' },
    ],
  });
  const create = async (name: string, c: V1Container, spec: Partial<V1PodSpec> = {}, node = nodeName, namespace = ns) => {
    await k.core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name },
        // upstream MakePodWithResizableContainers: restartPolicy OnFailure, grace 0.
        spec: { nodeName: node, tolerations: [WASM_TOLERATION], restartPolicy: 'OnFailure', terminationGracePeriodSeconds: 0, containers: [c], ...spec },
      },
    });
    return podUntil(k.core, namespace, name, 'running and ready', ready);
  };
  const ready = (p: V1Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
  const status = (p: V1Pod) => p.status!.containerStatuses![0]!;
  const condition = (p: V1Pod, type: string) => p.status?.conditions?.find((c) => c.type === type);
  /** `kubectl patch pod <name> --subresource resize` (a strategic merge patch, as upstream's MakeResizePatch). */
  const resize = (name: string, r: Resources, namespace = ns) => {
    const patch = JSON.stringify({ spec: { containers: [{ name: 'c1', resources: requirements(r) }] } });
    const out = kubectl(info, ['patch', 'pod', name, '-n', namespace, '--subresource', 'resize', '-p', patch]);
    expect(out.stderr).toBe('');
    expect(out.status).toBe(0);
  };
  const logs = (name: string, namespace = ns) => kubectl(info, ['logs', '-n', namespace, name]).stdout;

  /** podresize.WaitForPodResizeActuation: observedGeneration caught up, no resize condition left, ready. */
  const actuated = (name: string, namespace = ns) =>
    podUntil(
      k.core,
      namespace,
      name,
      'resize actuated',
      (p) =>
        (p.status?.observedGeneration ?? 0) >= (p.metadata?.generation ?? 0) &&
        !condition(p, 'PodResizePending') &&
        !condition(p, 'PodResizeInProgress') &&
        ready(p),
      90_000,
    );
  /** podresize.VerifyPodStatusResources: allocatedResources = the requests, resources = the requirements. */
  const expectStatusResources = (p: V1Pod, r: Resources) => {
    const want = requirements(r);
    expect(status(p).allocatedResources ?? {}).toEqual(want.requests ?? {});
    expect(status(p).resources).toEqual(want);
  };

  it('raises a memory limit in place: no restart, reported in containerStatuses[].resources, and a module that needs more than the old limit gets it', async () => {
    // Ported from test/e2e/common/node/pod_resize.go, "guaranteed qos - 1 container with resize policy" [no restart]
    // "resizing" Entry("mem") — the increase half of doPatchAndRollback; the cgroup check is the module itself:
    // it waits for memory at its old limit and goes on once the new one is in force.
    const original = guaranteed('20m', '16Mi');
    const desired = guaranteed('20m', '40Mi');
    const before = await create('raise', container(img['grow-on-demand'], ['24'], original));
    expectStatusResources(before, original);
    expect(before.metadata?.generation).toBe(1);
    await podUntil(k.core, ns, 'raise', 'the module waiting for memory', () => logs('raise').includes('waiting for memory at'));
    expect(logs('raise')).not.toContain('grown');
    resize('raise', desired);
    const after = await actuated('raise');
    expect(after.metadata?.generation).toBe(2);
    expect(after.status?.observedGeneration).toBe(2);
    expectStatusResources(after, desired);
    expect(status(after).restartCount).toBe(0);
    expect(status(after).containerID).toBe(status(before).containerID);
    await podUntil(k.core, ns, 'raise', 'the module grown past its old limit', () => logs('raise').includes('grown 24 MiB'));
    const events = await k.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=raise' });
    const reasons = events.items.map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['ResizeStarted', 'ResizeCompleted']));
    expect(events.items.find((e) => e.reason === 'ResizeStarted')?.message).toBe(
      'Pod resize started: {"containers":[{"name":"c1","resources":{"limits":{"cpu":"20m","memory":"40Mi"},"requests":{"cpu":"20m","memory":"40Mi"}}}],"generation":2}',
    );
  });

  it('resizes cpu and memory in opposite directions in place, then rolls back, with no restart either way', async () => {
    // Ported from test/e2e/common/node/pod_resize.go, "guaranteed qos - 1 container with resize policy" [no restart]
    // "resizing" Entry("cpu & mem in opposite directions") (increasedCPU, reducedMem), with its rollback.
    const original = guaranteed('20m', '35Mi');
    const desired = guaranteed('25m', '30Mi');
    const before = await create('opposite', container(img.sleep, ['3600'], original));
    expectStatusResources(before, original);
    resize('opposite', desired);
    const resized = await actuated('opposite');
    expectStatusResources(resized, desired);
    expect(status(resized).restartCount).toBe(0);
    resize('opposite', original);
    const back = await actuated('opposite');
    expectStatusResources(back, original);
    expect(status(back).restartCount).toBe(0);
    expect(status(back).containerID).toBe(status(before).containerID);
  });

  it('restarts a container whose memory resizePolicy is RestartContainer with the new limit, and again when rolled back', async () => {
    // Ported from test/e2e/common/node/pod_resize.go, "guaranteed qos - 1 container with resize policy" [mem restart]
    // "resizing" Entry("mem") — expectRestart 1, and "Resizes that trigger a restart should trigger a second restart when rolling back".
    const original = guaranteed('20m', '35Mi');
    const desired = guaranteed('20m', '40Mi');
    await create('restart', container(img.sleep, ['3600'], original, { mem: 'RestartContainer' }));
    resize('restart', desired);
    const resized = await podUntil(k.core, ns, 'restart', 'restarted with the new limit', (p) => ready(p) && status(p).restartCount === 1);
    const settled = await actuated('restart');
    expectStatusResources(settled, desired);
    expect(status(resized).lastState?.terminated?.exitCode).toBe(137);
    const events = await k.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=restart' });
    expect(events.items.map((e) => `${e.reason}: ${e.message}`)).toContain('Killing: Container c1 resize requires restart');
    resize('restart', original);
    await podUntil(k.core, ns, 'restart', 'restarted again', (p) => ready(p) && status(p).restartCount === 2);
    expectStatusResources(await actuated('restart'), original);
  });

  it('reports a memory limit lowered below what the module holds as PodResizeInProgress/Error (not pending), then takes a viable value', async () => {
    // Ported from test/e2e/common/node/pod_resize.go, It("decrease memory limit below usage"): a slightly lowered limit
    // succeeds, a tiny one (10Ki) stays in progress with reason Error "memory limit (N) below current usage (M)" and
    // no PodResizePending, the status resources keep the viable value, and the original is taken back.
    const original = { mem: '35Mi', memLim: '35Mi' };
    const viable = { mem: '30Mi', memLim: '30Mi' };
    const tiny = { mem: '10Ki', memLim: '10Ki' };
    await create('lower', container(img.grow, ['20'], original));
    await podUntil(k.core, ns, 'lower', 'the module holding 20 MiB', () => logs('lower').includes('grown 20 MiB'));
    resize('lower', viable);
    expectStatusResources(await actuated('lower'), viable);
    resize('lower', tiny);
    const stuck = await podUntil(
      k.core,
      ns,
      'lower',
      'PodResizeInProgress with reason Error',
      (p) => condition(p, 'PodResizeInProgress')?.reason === 'Error',
      60_000,
    );
    expect(condition(stuck, 'PodResizePending')).toBeUndefined();
    expect(condition(stuck, 'PodResizeInProgress')?.message).toMatch(/memory limit \(\d+\) below current usage/);
    expect(condition(stuck, 'PodResizeInProgress')?.observedGeneration).toBe(3);
    // Allocated, not actuated: allocatedResources follow the spec, resources keep what the module has.
    expect(status(stuck).allocatedResources).toEqual({ memory: '10Ki' });
    expect(status(stuck).resources).toEqual(requirements(viable));
    expect(status(stuck).restartCount).toBe(0);
    resize('lower', original);
    const back = await actuated('lower');
    expectStatusResources(back, original);
    expect(status(back).restartCount).toBe(0);
  });

  it('sets observedGeneration on the pod conditions, and follows a spec update', async () => {
    // Ported from test/e2e/node/pods.go, It("pod observedGeneration field set in pod conditions"): a pod with an image
    // that cannot be pulled; its conditions carry generation 1; fixed, they carry generation 2.
    const tracked = ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'];
    const generations = (p: V1Pod) => tracked.map((t) => condition(p, t)?.observedGeneration);
    await k.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'gen' },
        spec: { nodeName, tolerations: [WASM_TOLERATION], containers: [{ name: 'c1', image: `${img.sleep}-does-not-exist`, args: ['3600'] }] },
      },
    });
    await podUntil(k.core, ns, 'gen', 'conditions at generation 1', (p) => generations(p).every((g) => g === 1));
    await podUntil(k.core, ns, 'gen', 'an image pull failure', (p) => ['ErrImagePull', 'ImagePullBackOff'].includes(status(p)?.state?.waiting?.reason ?? ''));
    const fix = kubectl(info, ['patch', 'pod', 'gen', '-n', ns, '-p', JSON.stringify({ spec: { containers: [{ name: 'c1', image: img.sleep }] } })]);
    expect(fix.status, fix.stderr).toBe(0);
    const fixed = await podUntil(k.core, ns, 'gen', 'conditions at generation 2', (x) => generations(x).every((g) => g === 2));
    expect(fixed.status?.observedGeneration).toBe(2);
  });

  it('converges observedGeneration to metadata.generation after many spec updates', async () => {
    // Ported from test/e2e/node/pods.go, the ConformanceIt whose Testname is "Pods Generation, 500 updates" (499 podspec updates,
    // then generation and observedGeneration converge to 500), with 30 activeDeadlineSeconds updates instead of 499.
    await create('many', { name: 'c1', image: img.sleep, args: ['3600'] }, { restartPolicy: 'Always', activeDeadlineSeconds: 5000 });
    for (let i = 1; i <= 30; i++) {
      const out = kubectl(info, ['patch', 'pod', 'many', '-n', ns, '--type', 'merge', '-p', JSON.stringify({ spec: { activeDeadlineSeconds: 5000 - i } })]);
      expect(out.status, out.stderr).toBe(0);
    }
    const p = await podUntil(k.core, ns, 'many', 'observedGeneration 31', (x) => x.status?.observedGeneration === 31);
    expect(p.metadata?.generation).toBe(31);
  });
});

describe('a resize across a nodelet restart (external WASI runtime)', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'resize-n2';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  const img: Record<string, string> = {};

  beforeAll(async () => {
    reg = await startRegistry();
    for (const m of ['grow-on-demand', 'sleep']) img[m] = await pushModule(reg, m);
    nodelet = await startNodelet(info, nodeName, [], 'issued', { NODELET_WASI_RUNTIME: 'external' });
    ns = await podNamespace(k.core, 'resize-restart');
    await waitNodeReady(k.core, nodeName);
  });
  afterAll(async () => {
    await nodelet?.dispose();
    await reg?.stop();
  });

  const ready = (p: V1Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
  const status = (p: V1Pod) => p.status!.containerStatuses![0]!;
  const condition = (p: V1Pod, type: string) => p.status?.conditions?.find((c) => c.type === type);
  const create = async (name: string, image: string, args: string[], r: V1ResourceRequirements) => {
    await k.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name },
        spec: { nodeName, tolerations: [WASM_TOLERATION], terminationGracePeriodSeconds: 0, containers: [{ name: 'c1', image, args, resources: r }] },
      },
    });
    return podUntil(k.core, ns, name, 'ready', ready);
  };
  const resize = (name: string, r: V1ResourceRequirements) => {
    const out = kubectl(info, [
      'patch',
      'pod',
      name,
      '-n',
      ns,
      '--subresource',
      'resize',
      '-p',
      JSON.stringify({ spec: { containers: [{ name: 'c1', resources: r }] } }),
    ]);
    expect(out.status, out.stderr).toBe(0);
  };
  const logs = (name: string) => kubectl(info, ['logs', '-n', ns, name]).stdout;

  it('keeps an applied resize and a deferred one across a restart; the deferred one is allocated once room is freed', async () => {
    // Ported from test/e2e/node/pod_resize.go, It("pod-resize-scheduler-tests") TEST3 (a resize over the node's available cpu
    // is Deferred; deleting the other pods lets it complete) and It("pod-resize-retry-deferred-test-1"), with a nodelet
    // restart in between: the allocation is checkpointed (<root-dir>/allocated_pods_state), as upstream's survives a kubelet restart.
    const node = await k.core.readNode({ name: nodeName });
    const allocatableMilli = Math.round(Number.parseFloat(node.status!.allocatable!.cpu!) * (node.status!.allocatable!.cpu!.endsWith('m') ? 1 : 1000));
    const bigCpu = `${allocatableMilli - 300}m`;
    // An applied resize: the raised memory limit stays in force across the restart (the runtime keeps the module).
    await create('grower', img['grow-on-demand'], ['24'], { requests: { memory: '16Mi', cpu: '10m' }, limits: { memory: '16Mi' } });
    await podUntil(k.core, ns, 'grower', 'waiting for memory', () => logs('grower').includes('waiting for memory at'));
    // A deferred one: 200m → 600m with only 100m free.
    await create('big', img.sleep, ['3600'], { requests: { cpu: bigCpu } });
    const small = await create('small', img.sleep, ['3600'], { requests: { cpu: '200m' } });
    resize('small', { requests: { cpu: '600m' } });
    const deferred = await podUntil(k.core, ns, 'small', 'PodResizePending Deferred', (p) => condition(p, 'PodResizePending')?.reason === 'Deferred');
    expect(condition(deferred, 'PodResizePending')?.message).toBe(
      `Node didn't have enough resource: cpu, requested: 600, used: ${allocatableMilli - 300 + 10}, capacity: ${allocatableMilli}`,
    );
    expect(status(deferred).allocatedResources).toEqual({ cpu: '200m' });
    expect(status(deferred).resources).toEqual({ requests: { cpu: '200m' } });
    expect(existsSync(join(nodelet.rootDir, 'allocated_pods_state'))).toBe(true);

    const probedBefore = new Date(condition(deferred, 'PodResizePending')!.lastProbeTime!).getTime();
    await nodelet.restart();
    await waitNodeReady(k.core, nodeName);
    // Decided again by the new nodelet (a later probe time): still deferred, still allocated what it had, its container not restarted.
    const again = await podUntil(
      k.core,
      ns,
      'small',
      'deferred again by the new nodelet',
      (p) => new Date(condition(p, 'PodResizePending')?.lastProbeTime ?? 0).getTime() > probedBefore && ready(p),
      90_000,
    );
    expect(condition(again, 'PodResizePending')).toMatchObject({ reason: 'Deferred', observedGeneration: 2 });
    expect(status(again).allocatedResources).toEqual({ cpu: '200m' });
    expect(status(again).restartCount).toBe(0);
    expect(status(again).containerID).toBe(status(small).containerID);
    // The running module's limit is raised through the re-adopted runtime.
    resize('grower', { requests: { memory: '40Mi', cpu: '10m' }, limits: { memory: '40Mi' } });
    await podUntil(k.core, ns, 'grower', 'grown past the old limit', () => logs('grower').includes('grown 24 MiB'));
    const grower = await podUntil(
      k.core,
      ns,
      'grower',
      'resize done',
      (p) => !condition(p, 'PodResizeInProgress') && status(p).resources?.limits?.memory === '40Mi',
    );
    expect(status(grower).restartCount).toBe(0);

    await k.core.deleteNamespacedPod({ name: 'big', namespace: ns, gracePeriodSeconds: 0 });
    const done = await podUntil(
      k.core,
      ns,
      'small',
      'the deferred resize completed',
      (p) => !condition(p, 'PodResizePending') && !condition(p, 'PodResizeInProgress') && status(p).allocatedResources?.cpu === '600m',
      90_000,
    );
    expect(status(done).resources).toEqual({ requests: { cpu: '600m' } });
    expect(status(done).restartCount).toBe(0);
  });
});

/**
 * The resize decisions of the allocation manager (upstream allocation_manager.go
 * handlePodResourcesResize / canAdmitPod / retryPendingResizes, and the resize conditions of
 * its status manager), with small fakes: a pod list, a provider, events.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { AnyProvider } from '../../../plugin-api/v1/index.ts';
import { AllocationManager, resourcesChanged } from '../../../core/allocation/allocation-manager.ts';
import { predicateAdmitHandler } from '../../../core/pods/admission.ts';
import { fixedAllocatable } from '../../../core/pods/admit-handler.ts';
import { FakeEvents, FakeProvider, memoryLogger, VM_PROVIDER } from '../pods/fakes.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const managers: AllocationManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.stop()));
});

function pod(name: string, cpu: string, o: { generation?: number; policy?: string; memory?: string; priority?: number } = {}): V1Pod {
  const c: V1Container = {
    name: 'c1',
    image: 'x',
    resources: { requests: { cpu, ...(o.memory ? { memory: o.memory } : {}) }, limits: { cpu, ...(o.memory ? { memory: o.memory } : {}) } },
    ...(o.policy ? { resizePolicy: [{ resourceName: 'cpu', restartPolicy: o.policy }] } : {}),
  };
  return {
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, generation: o.generation ?? 1 },
    spec: { containers: [c], ...(o.priority !== undefined ? { priority: o.priority } : {}) },
    status: { phase: 'Running' },
  };
}

/** `p` resized: cpu request and limit `cpu`, generation + 1. */
function resized(p: V1Pod, cpu: string): V1Pod {
  const c = p.spec!.containers[0]!;
  return {
    ...p,
    metadata: { ...p.metadata, generation: (p.metadata!.generation ?? 1) + 1 },
    spec: { ...p.spec!, containers: [{ ...c, resources: { requests: { ...c.resources!.requests, cpu }, limits: { ...c.resources!.limits, cpu } } }] },
  };
}

function setup(o: { provider?: AnyProvider; dir?: string; sourcesReady?: () => boolean } = {}) {
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), 'nodelet-alloc-mgr-'));
  dirs.push(dir);
  const list: V1Pod[] = [];
  const provider = o.provider ?? Object.assign(new FakeProvider(), { resizeContainer: async () => ({ applied: true }) });
  const events = new FakeEvents();
  const resyncs: string[] = [];
  const m = new AllocationManager({
    dir,
    log: memoryLogger(),
    events,
    pods: { pods: () => list, activePods: () => list, lookup: () => undefined },
    admitNode: { nodeName: 'n', nodeLabels: {}, allocatable: [fixedAllocatable({ cpu: '2', memory: '4Gi', pods: '110' })] },
    providerOf: () => provider,
    sourcesReady: o.sourcesReady ?? (() => true),
    retryMs: { initial: 3_600_000, period: 3_600_000 },
  });
  m.addAdmitHandlers([predicateAdmitHandler]);
  m.onResync((uids) => resyncs.push(...uids));
  managers.push(m);
  /** Replaces `p` in the pod list and tells the manager (as the pod controller's upsert does). */
  const update = async (p: V1Pod) => {
    const i = list.findIndex((x) => x.metadata!.uid === p.metadata!.uid);
    const prev = list[i]!;
    list[i] = p;
    m.updated(prev, p);
    await m.serially(async () => undefined);
  };
  const add = (p: V1Pod) => {
    list.push(p);
    m.admitted(p);
  };
  const cpuOf = (p: V1Pod) => m.allocatedPod(p).spec!.containers[0]!.resources!.requests!.cpu;
  return { m, list, events, resyncs, update, add, cpuOf, dir, provider };
}

const conds = (m: AllocationManager, p: V1Pod) =>
  m.conditions.list(p.metadata!.uid!).map((c) => ({ type: c.type, reason: c.reason, message: c.message, gen: c.observedGeneration }));

describe('deciding a resize', () => {
  it('allocates a resize that fits: PodResizeInProgress for its generation, a ResizeStarted event with the resources, the pod synced', async () => {
    const t = setup();
    const a = pod('a', '500m');
    t.add(a);
    await t.update(resized(a, '1'));
    expect(t.cpuOf(t.list[0]!)).toBe('1');
    expect(conds(t.m, a)).toEqual([{ type: 'PodResizeInProgress', reason: '', message: '', gen: 2 }]);
    expect(t.events.lines()).toEqual([
      'ResizeStarted: Pod resize started: {"containers":[{"name":"c1","resources":{"limits":{"cpu":"1"},"requests":{"cpu":"1"}}}],"generation":2}',
    ]);
    expect(t.resyncs).toEqual(['uid-a']);
  });

  it("defers a resize the node's free resources cannot hold, with the predicate's message, and allocates it once another pod is gone", async () => {
    const t = setup();
    const a = pod('a', '500m');
    const b = pod('b', '1200m');
    t.add(a);
    t.add(b);
    await t.update(resized(a, '1'));
    expect(t.cpuOf(t.list[0]!)).toBe('500m');
    const message = "Node didn't have enough resource: cpu, requested: 1000, used: 1200, capacity: 2000";
    expect(conds(t.m, a)).toEqual([{ type: 'PodResizePending', reason: 'Deferred', message, gen: 2 }]);
    expect(t.events.list.at(-1)).toMatchObject({
      type: 'Warning',
      reason: 'ResizeDeferred',
      note: `Pod resize Deferred: {"containers":[{"name":"c1","resources":{"limits":{"cpu":"1"},"requests":{"cpu":"1"}}}],"generation":2,"error":"${message}"}`,
    });
    // Tried again (periodic retry, another update): still deferred, no second event.
    await t.update({ ...t.list[0]!, metadata: { ...t.list[0]!.metadata, labels: { x: 'y' } } });
    expect(t.events.list.filter((e) => e.reason === 'ResizeDeferred')).toHaveLength(1);
    t.list.splice(1, 1);
    t.m.removed('uid-b');
    await vi.waitFor(() => expect(t.cpuOf(t.list[0]!)).toBe('1'));
    expect(conds(t.m, a)).toEqual([{ type: 'PodResizeInProgress', reason: '', message: '', gen: 2 }]);
  });

  it('clears PodResizePending when a deferred resize is undone', async () => {
    const t = setup();
    const a = pod('a', '500m');
    t.add(a);
    t.add(pod('b', '1200m'));
    const big = resized(a, '1');
    await t.update(big);
    expect(t.m.conditions.isDeferred('uid-a')).toBe(true);
    await t.update({ ...resized(big, '500m') });
    expect(conds(t.m, a)).toEqual([]);
    expect(t.cpuOf(t.list[0]!)).toBe('500m');
  });

  it('is Infeasible on a provider without resizeContainer when the policy is NotRequired; RestartContainer is allocated', async () => {
    const plain = setup({ provider: new FakeProvider() });
    const a = pod('a', '500m');
    plain.add(a);
    await plain.update(resized(a, '1'));
    expect(conds(plain.m, a)).toEqual([
      {
        type: 'PodResizePending',
        reason: 'Infeasible',
        message:
          'In-place resize of containers is not supported by provider "fake": set resizePolicy RestartContainer for cpu to restart container c1 with the new resources',
        gen: 2,
      },
    ]);
    expect(plain.events.list.at(-1)).toMatchObject({ type: 'Warning', reason: 'ResizeInfeasible' });
    const restart = setup({ provider: new FakeProvider() });
    const r = pod('r', '500m', { policy: 'RestartContainer' });
    restart.add(r);
    await restart.update(resized(r, '1'));
    expect(restart.cpuOf(restart.list[0]!)).toBe('1');
  });

  it("is Infeasible above the node's allocatable (the apiserver's PodResizeValidator check, with its message)", async () => {
    const t = setup();
    const a = pod('a', '500m');
    t.add(a);
    await t.update(resized(a, '3'));
    expect(conds(t.m, a)).toEqual([
      {
        type: 'PodResizePending',
        reason: 'Infeasible',
        message: "node didn't have enough allocatable resources: cpu, requested: 3000, allocatable: 2000",
        gen: 2,
      },
    ]);
  });

  it('is Infeasible for a pod of a provider that owns whole pods', async () => {
    const t = setup({ provider: { ...VM_PROVIDER, pods: {} } as unknown as AnyProvider });
    const a = pod('a', '500m');
    t.add(a);
    await t.update(resized(a, '1'));
    expect(conds(t.m, a)[0]).toMatchObject({ reason: 'Infeasible', message: 'In-place resize is not supported by provider "vm": it runs whole pods' });
  });

  it('waits while the sources are not ready', async () => {
    let ready = false;
    const t = setup({ sourcesReady: () => ready });
    const a = pod('a', '500m');
    t.add(a);
    await t.update(resized(a, '1'));
    expect(t.cpuOf(t.list[0]!)).toBe('500m');
    expect(conds(t.m, a)).toEqual([]);
    ready = true;
    t.m.removed('uid-gone'); // a pod removed: pending resizes are tried again
    await vi.waitFor(() => expect(t.cpuOf(t.list[0]!)).toBe('1'));
  });

  it('tries decreases before increases, then higher priority first', async () => {
    const t = setup();
    const small = pod('small', '200m', { priority: 0 });
    const high = pod('high', '200m', { priority: 100 });
    const down = pod('down', '1500m');
    [small, high, down].forEach((p) => t.add(p));
    // Both increases are deferred (free: 100m); the decrease frees 1000m, enough for one of them.
    await t.update(resized(small, '1'));
    await t.update(resized(high, '1'));
    expect(t.m.conditions.isDeferred('uid-small') && t.m.conditions.isDeferred('uid-high')).toBe(true);
    await t.update(resized(down, '500m'));
    expect(t.cpuOf(t.list[2]!)).toBe('500m');
    expect(t.cpuOf(t.list[1]!)).toBe('1'); // the higher priority got the room
    expect(t.m.conditions.isDeferred('uid-small')).toBe(true);
  });
});

describe('across a restart', () => {
  it('keeps the allocation: a pod admitted again runs with it while its newer spec waits as a pending resize', async () => {
    const first = setup();
    const a = pod('a', '500m');
    first.add(a);
    first.add(pod('b', '1200m'));
    await first.update(resized(a, '1')); // deferred
    await first.m.stop();
    const second = setup({ dir: first.dir });
    second.list.push(pod('b', '1200m'));
    const desired = {
      ...resized(a, '1'),
      status: { phase: 'Running', conditions: [{ type: 'PodResizePending', status: 'True', reason: 'Deferred', message: 'm', observedGeneration: 2 }] },
    };
    second.add(desired);
    expect(second.cpuOf(desired)).toBe('500m');
    await vi.waitFor(() => expect(second.m.conditions.isDeferred('uid-a')).toBe(true));
    expect(conds(second.m, desired)[0]).toMatchObject({ reason: 'Deferred', gen: 2 });
  });
});

describe('actuation', () => {
  it('keeps PodResizeInProgress while running containers differ, adds an Error, and clears it with ResizeCompleted naming the generation', () => {
    const t = setup();
    const a = pod('a', '500m', { generation: 3 });
    t.add(a);
    t.m.inProgress(a);
    t.m.failed(a, 'cannot decrease memory limits: attempting to set container "c1" memory limit (1024) below current usage (2048)');
    t.m.failed(a, 'cannot decrease memory limits: attempting to set container "c1" memory limit (1024) below current usage (2048)');
    t.m.inProgress({ ...a, metadata: { ...a.metadata, generation: 4 } }); // keeps the reason and generation
    expect(conds(t.m, a)).toEqual([
      {
        type: 'PodResizeInProgress',
        reason: 'Error',
        message: 'cannot decrease memory limits: attempting to set container "c1" memory limit (1024) below current usage (2048)',
        gen: 3,
      },
    ]);
    t.m.completed(a);
    t.m.completed(a);
    expect(conds(t.m, a)).toEqual([]);
    expect(t.events.list.map((e) => e.reason)).toEqual(['ResizeError', 'ResizeCompleted']);
    expect(t.events.list[1]!.note).toMatch(/^Pod resize completed: \{"containers":\[.*\],"generation":3\}$/);
  });

  it('records the actuated resources in their own checkpoint', async () => {
    const t = setup();
    t.m.setActuated('uid-a', 'c1', { requests: { cpu: '1' }, limits: { cpu: '1' } });
    await t.m.stop();
    const again = setup({ dir: t.dir });
    expect(again.m.actuated('uid-a', 'c1')).toEqual({ limits: { cpu: '1' }, requests: { cpu: '1' } });
  });
});

describe('resourcesChanged', () => {
  it('sees cpu and memory requests and limits of resizable containers, by value', () => {
    const a = pod('a', '500m', { memory: '64Mi' });
    expect(resourcesChanged(a, resized(a, '0.5'))).toBe(false);
    expect(resourcesChanged(a, resized(a, '600m'))).toBe(true);
    const ext = {
      ...a,
      spec: { containers: [{ ...a.spec!.containers[0]!, resources: { ...a.spec!.containers[0]!.resources, limits: { 'example.com/x': '1' } } }] },
    };
    expect(
      resourcesChanged(ext, {
        ...ext,
        spec: { containers: [{ ...ext.spec.containers[0]!, resources: { ...ext.spec.containers[0]!.resources, limits: { 'example.com/x': '2' } } }] },
      }),
    ).toBe(false);
  });
});

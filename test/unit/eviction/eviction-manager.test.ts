import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { EvictionManager, type EvictionSettings } from '../../../core/eviction/eviction-manager.ts';
import type { PodUsageStats } from '../../../core/eviction/ranking.ts';
import type { Observations } from '../../../core/eviction/thresholds.ts';
import type { AbnormalTermination } from '../../../core/pods/index.ts';
import { computeConditions } from '../../../core/node/conditions.ts';
import { FakeEvents, memoryLogger } from '../pods/fakes.ts';

const MI = 1024 * 1024;
const GI = 1024 * MI;

const settings = (over: Partial<EvictionSettings> = {}): EvictionSettings => ({
  evictionHard: { 'memory.available': '100Mi', 'imagefs.available': '15%' },
  evictionSoft: {},
  evictionSoftGracePeriodMs: {},
  evictionMinimumReclaim: {},
  evictionPressureTransitionPeriodMs: 30_000,
  evictionMaxPodGracePeriodSeconds: 0,
  evictionMonitoringPeriodMs: 10_000,
  ...over,
});

const pod = (name: string, o: { memory?: string; priority?: number; static?: boolean } = {}): V1Pod => ({
  metadata: { name, namespace: 'ns', uid: name, ...(o.static ? { annotations: { 'kubernetes.io/config.source': 'file' } } : {}) },
  spec: {
    priority: o.priority,
    containers: [{ name: 'main', resources: o.memory ? { requests: { memory: o.memory, cpu: '1' }, limits: { memory: o.memory, cpu: '1' } } : {} }],
  },
});

/** A manager on a fake clock and fake observations. */
function harness(o: { settings?: EvictionSettings; pods: V1Pod[]; usage?: Record<string, number>; reclaim?: (bytes: number) => Promise<number> }) {
  let now = 1_000_000;
  let obs: Observations = { 'memory.available': { available: 4 * GI, capacity: 8 * GI } };
  const events = new FakeEvents();
  const evicted: { pod: string; t: AbnormalTermination }[] = [];
  let pokes = 0;
  let active = [...o.pods];
  const m = new EvictionManager({
    nodeName: 'n1',
    settings: o.settings ?? settings(),
    log: memoryLogger(),
    events,
    signals: async () => obs,
    activePods: () => active,
    podStats: async () =>
      new Map<string, PodUsageStats>(Object.entries(o.usage ?? {}).map(([uid, mib]) => [uid, { containers: [{ name: 'main', workingSetBytes: mib * MI }] }])),
    reclaimImages: o.reclaim,
    terminate: async (p, t) => {
      evicted.push({ pod: p.metadata!.name!, t });
      active = active.filter((x) => x !== p);
    },
    now: () => now,
  });
  m.onConditionsChanged(() => pokes++);
  return {
    m,
    events,
    evicted,
    pokes: () => pokes,
    set: (x: Observations) => (obs = x),
    advance: (ms: number) => (now += ms),
  };
}

describe('eviction manager', () => {
  it('reports MemoryPressure while the threshold is met and for the transition period after, then clears it', async () => {
    const h = harness({ pods: [] });
    await h.m.synchronize();
    expect(h.m.pressure()).toEqual({ memory: false, disk: false, pid: false });
    h.set({ 'memory.available': { available: 50 * MI, capacity: 8 * GI } });
    await h.m.synchronize();
    expect(h.m.pressure().memory).toBe(true);
    expect(h.pokes()).toBe(1);
    h.set({ 'memory.available': { available: 4 * GI, capacity: 8 * GI } });
    h.advance(20_000);
    await h.m.synchronize();
    expect(h.m.pressure().memory).toBe(true); // within the 30 s transition period
    h.advance(10_000);
    await h.m.synchronize();
    expect(h.m.pressure().memory).toBe(false);
    expect(h.pokes()).toBe(2);
    expect(h.events.lines().filter((l) => l.startsWith('NodeHas'))).toEqual([
      'NodeHasInsufficientMemory: Node n1 status is now: NodeHasInsufficientMemory',
      'NodeHasSufficientMemory: Node n1 status is now: NodeHasSufficientMemory',
    ]);
  });

  it("feeds the node status: the manager's verdict becomes the conditions, with upstream's reasons", async () => {
    const h = harness({ pods: [] });
    h.set({ 'memory.available': { available: 50 * MI, capacity: 8 * GI } });
    await h.m.synchronize();
    const conds = computeConditions(h.m.pressure(), []);
    expect(conds.find((c) => c.type === 'MemoryPressure')).toEqual({
      type: 'MemoryPressure',
      status: 'True',
      reason: 'KubeletHasInsufficientMemory',
      message: 'kubelet has insufficient memory available',
    });
    expect(conds.find((c) => c.type === 'DiskPressure')).toMatchObject({ status: 'False', reason: 'KubeletHasNoDiskPressure' });
  });

  it('evicts one pod per pass, BestEffort before Guaranteed, never a static pod, with upstream status and event', async () => {
    const h = harness({
      pods: [pod('guaranteed', { memory: '512Mi' }), pod('static', { static: true }), pod('best-effort')],
      usage: { guaranteed: 100, 'best-effort': 300, static: 900 },
    });
    h.set({ 'memory.available': { available: 50 * MI, capacity: 8 * GI } });
    expect(await h.m.synchronize()).toBe('ns/best-effort');
    const message =
      'The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container main was using 300Mi, request is 0, has larger consumption of memory. ';
    expect(h.evicted).toEqual([
      {
        pod: 'best-effort',
        t: { graceMs: 1000, reason: 'Evicted', message, conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message }] },
      },
    ]);
    expect(h.events.lines()).toEqual([
      'NodeHasInsufficientMemory: Node n1 status is now: NodeHasInsufficientMemory',
      'EvictionThresholdMet: Attempting to reclaim memory',
      `Evicted: ${message}`,
    ]);
    expect(await h.m.synchronize()).toBe('ns/guaranteed');
    expect(await h.m.synchronize()).toBeUndefined(); // only the static pod is left
  });

  it('waits out a soft threshold grace period before evicting', async () => {
    const h = harness({
      settings: settings({ evictionHard: {}, evictionSoft: { 'memory.available': '1Gi' }, evictionSoftGracePeriodMs: { 'memory.available': 60_000 } }),
      pods: [pod('p')],
    });
    h.set({ 'memory.available': { available: 512 * MI, capacity: 8 * GI } });
    expect(await h.m.synchronize()).toBeUndefined();
    expect(h.m.pressure().memory).toBe(true);
    h.advance(60_000);
    expect(await h.m.synchronize()).toBe('ns/p');
    expect(h.evicted[0]!.t.graceMs).toBe(30_000);
  });

  it('deletes unused images under imagefs pressure and evicts no pod when that was enough', async () => {
    let asked = 0;
    const h = harness({
      pods: [pod('p')],
      reclaim: async (bytes) => {
        asked = bytes;
        h.set({ 'imagefs.available': { available: 50 * GI, capacity: 100 * GI } });
        return bytes;
      },
    });
    h.set({ 'imagefs.available': { available: 10 * GI, capacity: 100 * GI } });
    expect(await h.m.synchronize()).toBeUndefined();
    expect(asked).toBe(Math.floor(100 * GI * 0.15) - 10 * GI);
    expect(h.evicted).toEqual([]);
    expect(h.m.pressure().disk).toBe(true);
  });

  it('refuses BestEffort pods under memory pressure and every pod under disk pressure, with upstream reason', async () => {
    const h = harness({ pods: [] });
    const admit = h.m.admitHandler();
    const ctx = { nodeName: 'n1', nodeLabels: {}, allocatable: {}, admitted: [] };
    h.set({ 'memory.available': { available: 50 * MI, capacity: 8 * GI } });
    await h.m.synchronize();
    expect(await admit.admit(pod('be'), ctx)).toEqual({ admit: false, reason: 'Evicted', message: 'The node had condition: [MemoryPressure]. ' });
    expect(await admit.admit(pod('g', { memory: '1Mi' }), ctx)).toEqual({ admit: true });
    const tolerating = pod('tol');
    tolerating.spec!.tolerations = [{ key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' }];
    expect(await admit.admit(tolerating, ctx)).toEqual({ admit: true });
    h.set({ 'memory.available': { available: 50 * MI, capacity: 8 * GI }, 'imagefs.available': { available: 1 * GI, capacity: 100 * GI } });
    await h.m.synchronize();
    expect(await admit.admit(pod('g', { memory: '1Mi' }), ctx)).toEqual({
      admit: false,
      reason: 'Evicted',
      message: 'The node had condition: [MemoryPressure DiskPressure]. ',
    });
  });
});

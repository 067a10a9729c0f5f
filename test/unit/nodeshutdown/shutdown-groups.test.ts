import { describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { groupPods, podPriority, podShutdownGraceMs, shutdownGroups, SYSTEM_CRITICAL_PRIORITY } from '../../../core/nodeshutdown/shutdown-groups.ts';

const pod = (name: string, spec: Partial<NonNullable<V1Pod['spec']>> = {}): V1Pod => ({ metadata: { name }, spec: { containers: [], ...spec } });

describe('shutdownGroups (upstream migrateConfig)', () => {
  it('splits the total into regular (total − critical) and critical bands', () => {
    expect(shutdownGroups(30_000, 10_000)).toEqual([
      { priority: 0, graceMs: 20_000 },
      { priority: SYSTEM_CRITICAL_PRIORITY, graceMs: 10_000 },
    ]);
  });
  it('is off with no total, or a critical part larger than the total', () => {
    expect(shutdownGroups(0, 0)).toEqual([]);
    expect(shutdownGroups(10_000, 20_000)).toEqual([]);
  });
});

describe('groupPods (upstream groupByPriority)', () => {
  const groups = shutdownGroups(30_000, 10_000);
  it('puts critical pods (by priority or built-in class) in the last band and the rest in the first', () => {
    const pods = [
      pod('plain'),
      pod('high-user', { priority: 1_000_000_000 }),
      pod('cluster-critical', { priority: SYSTEM_CRITICAL_PRIORITY }),
      pod('node-critical-static', { priorityClassName: 'system-node-critical' }),
      pod('negative', { priority: -5 }),
    ];
    const out = groupPods(groups, pods);
    expect(out.map((g) => [g.priority, g.graceMs, g.pods.map((p) => p.metadata!.name)])).toEqual([
      [0, 20_000, ['plain', 'high-user', 'negative']],
      [SYSTEM_CRITICAL_PRIORITY, 10_000, ['cluster-critical', 'node-critical-static']],
    ]);
  });
  it('reads spec.priority before the class name', () => {
    expect(podPriority(pod('x', { priority: 7, priorityClassName: 'system-cluster-critical' }))).toBe(7);
    expect(podPriority(pod('x', { priorityClassName: 'unknown' }))).toBe(0);
  });
});

describe('podShutdownGraceMs', () => {
  it("keeps a pod's shorter terminationGracePeriodSeconds, else the band's", () => {
    expect(podShutdownGraceMs(pod('a', { terminationGracePeriodSeconds: 5 }), 20_000)).toBe(5000);
    expect(podShutdownGraceMs(pod('b', { terminationGracePeriodSeconds: 60 }), 20_000)).toBe(20_000);
    expect(podShutdownGraceMs(pod('c'), 20_000)).toBe(20_000);
  });
});

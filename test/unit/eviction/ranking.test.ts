import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  evictionMessage,
  formatBytes,
  podQos,
  rankDiskPressure,
  rankMemoryPressure,
  rankPIDPressure,
  type PodUsageStats,
} from '../../../core/eviction/ranking.ts';

const MI = 1024 * 1024;
const pod = (name: string, opts: { requests?: Record<string, string>; limits?: Record<string, string>; priority?: number } = {}): V1Pod => ({
  metadata: { name, namespace: 'ns', uid: name },
  spec: {
    priority: opts.priority,
    containers: [{ name: 'main', resources: { requests: opts.requests, limits: opts.limits } }],
  },
});
const stats = (m: Record<string, PodUsageStats>) => (p: V1Pod) => m[p.metadata!.name!];
const mem = (mib: number, diskMiB?: number): PodUsageStats => ({
  containers: [{ name: 'main', workingSetBytes: mib * MI }],
  diskBytes: diskMiB && diskMiB * MI,
});

describe('ranking for eviction', () => {
  it('memory: pods over their requests first, then lower priority, then more usage over requests', () => {
    const guaranteed = pod('guaranteed', { requests: { memory: '500Mi', cpu: '1' }, limits: { memory: '500Mi', cpu: '1' } });
    const bestEffort = pod('best-effort');
    const lowPrioUnder = pod('low-under', { requests: { memory: '1Gi' }, priority: -10 });
    const highPrioOver = pod('high-over', { requests: { memory: '10Mi' }, priority: 1000 });
    const s = stats({ guaranteed: mem(400), 'best-effort': mem(50), 'low-under': mem(100), 'high-over': mem(300) });
    expect(rankMemoryPressure([guaranteed, lowPrioUnder, highPrioOver, bestEffort], s).map((p) => p.metadata!.name)).toEqual([
      'best-effort',
      'high-over',
      'low-under',
      'guaranteed',
    ]);
    // Same priority, both over: the larger usage over requests first.
    const a = pod('a', { requests: { memory: '100Mi' } });
    const b = pod('b');
    expect(rankMemoryPressure([b, a], stats({ a: mem(400), b: mem(200) })).map((p) => p.metadata!.name)).toEqual(['a', 'b']);
  });

  it('puts pods without stats first', () => {
    expect(rankMemoryPressure([pod('measured'), pod('unknown')], stats({ measured: mem(10) })).map((p) => p.metadata!.name)).toEqual(['unknown', 'measured']);
  });

  it('disk: by ephemeral-storage usage over requests; pids: by priority', () => {
    const s = stats({ small: mem(1, 10), big: mem(1, 500), capped: mem(1, 600) });
    const capped = pod('capped', { requests: { 'ephemeral-storage': '1Gi' } });
    expect(rankDiskPressure([pod('small'), capped, pod('big')], s).map((p) => p.metadata!.name)).toEqual(['big', 'small', 'capped']);
    expect(rankPIDPressure([pod('hi', { priority: 5 }), pod('lo', { priority: 1 })], s).map((p) => p.metadata!.name)).toEqual(['lo', 'hi']);
  });

  it('computes the QoS class as upstream', () => {
    expect(podQos(pod('x'))).toBe('BestEffort');
    expect(podQos(pod('x', { requests: { memory: '1Mi' } }))).toBe('Burstable');
    expect(podQos(pod('x', { limits: { memory: '1Mi', cpu: '1' } }))).toBe('Guaranteed');
    expect(podQos(pod('x', { requests: { memory: '1Mi', cpu: '1' }, limits: { memory: '2Mi', cpu: '1' } }))).toBe('Burstable');
  });

  it("writes upstream's eviction message with Go quantity formatting", () => {
    expect(formatBytes(100 * MI)).toBe('100Mi');
    expect(formatBytes(2036 * 1024)).toBe('2036Ki');
    expect(formatBytes(1000)).toBe('1k');
    expect(formatBytes(123457)).toBe('123457');
    const p = pod('hog', { requests: { memory: '64Mi' } });
    expect(evictionMessage('memory', p, mem(300), { quantity: 100 * MI, available: 50 * MI })).toBe(
      'The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container main was using 300Mi, request is 64Mi, has larger consumption of memory. ',
    );
    expect(evictionMessage('memory', pod('be'), mem(1), { quantity: 100 * MI, available: 50 * MI })).toBe(
      'The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container main was using 1Mi, request is 0, has larger consumption of memory. ',
    );
  });
});

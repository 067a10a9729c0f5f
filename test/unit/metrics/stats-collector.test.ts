import { describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { providerError, type AnyProvider, type ContainerStats } from '@nodelet/plugin-api/v1';
import { StatsCollector, providerContainerId, runningCounts, type PodsView } from '../../../core/agent/stats-collector.ts';
import { goDuration, kubeletConfigOf } from '../../../core/agent/configz.ts';
import { resolveOptions } from '../../../core/config/options.ts';

const silent = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silent;
  },
};

function pod(name: string, states: Array<'running' | 'terminated' | 'waiting'>): V1Pod {
  return {
    metadata: { namespace: 'ns', name, uid: `uid-${name}` },
    status: {
      phase: states.includes('running') ? 'Running' : 'Pending',
      containerStatuses: states.map((s, i) => ({
        name: `c${i}`,
        image: 'x',
        imageID: '',
        ready: s === 'running',
        restartCount: 0,
        containerID: s === 'waiting' ? undefined : `wasi://${name}-c${i}`,
        state:
          s === 'running'
            ? { running: { startedAt: new Date('2026-01-01T00:00:00Z') } }
            : s === 'terminated'
              ? { terminated: { exitCode: 0 } }
              : { waiting: { reason: 'ContainerCreating' } },
      })),
    },
  };
}

/** A provider measuring with a counter per container (what a real provider reports is covered by the wasi tests). */
function measuring(cpu: Map<string, number>): AnyProvider {
  return {
    name: 'counting',
    stats: async (id: string): Promise<ContainerStats> => {
      if (!cpu.has(id)) throw providerError('NotFound', id);
      return { timestamp: new Date(), cpu: { usageCoreNanoSeconds: cpu.get(id)! }, memory: { workingSetBytes: 65536 } };
    },
  } as unknown as AnyProvider;
}

describe('stats collection', () => {
  it('strips the runtime scheme from container ids', () => {
    expect(providerContainerId('wasi://abc')).toBe('abc');
    expect(providerContainerId('abc')).toBe('abc');
  });

  it('asks the provider for each running container and leaves out ended ones', async () => {
    const cpu = new Map([
      ['a-c0', 5e9],
      ['b-c1', 1e9],
    ]);
    const pods = [pod('a', ['running']), pod('b', ['terminated', 'running']), pod('c', ['waiting'])];
    const view: PodsView = { activePods: () => pods, lookup: () => ({ pod: pods[0]!, worker: { provider: measuring(cpu) } }) };
    const snap = await new StatsCollector('n1', view, silent).snapshot();
    expect(snap.scrapeError).toBe(false);
    expect(snap.node.nodeName).toBe('n1');
    expect(snap.node.cpuNs).toBeGreaterThan(0);
    expect(snap.node.workingSetBytes).toBeGreaterThan(0);
    expect(snap.pods.map((p) => [p.name, p.containers.map((c) => [c.name, c.cpuNs, c.workingSetBytes])])).toEqual([
      ['a', [['c0', 5e9, 65536]]],
      ['b', [['c1', 1e9, 65536]]],
    ]);
  });

  it('a container gone between status and call is skipped; another failure sets scrapeError', async () => {
    const pods = [pod('a', ['running'])];
    const gone: PodsView = { activePods: () => pods, lookup: () => ({ pod: pods[0]!, worker: { provider: measuring(new Map()) } }) };
    expect(await new StatsCollector('n1', gone, silent).snapshot()).toMatchObject({ pods: [], scrapeError: false });
    const broken = {
      name: 'x',
      stats: async () => {
        throw new Error('boom');
      },
    } as unknown as AnyProvider;
    const bad: PodsView = { activePods: () => pods, lookup: () => ({ pod: pods[0]!, worker: { provider: broken } }) };
    expect(await new StatsCollector('n1', bad, silent).snapshot()).toMatchObject({ pods: [], scrapeError: true });
  });

  it('counts running pods and containers by state for /metrics', () => {
    const pods = [pod('a', ['running']), pod('b', ['terminated', 'running']), pod('c', ['waiting']), pod('d', ['terminated'])];
    const view: PodsView = { activePods: () => pods, lookup: () => ({ pod: pods[0]!, worker: { provider: { name: 'wasi' } as AnyProvider } }) };
    expect(runningCounts(view)).toEqual({ pods: 2, containers: { running: 2, exited: 2, created: 0 }, perProvider: { wasi: 4 } });
  });
});

describe('configz', () => {
  it('writes Go durations', () => {
    expect([0, 500, 30_000, 120_000, 90_000, 3_600_000, 3_661_000].map(goDuration)).toEqual(['0s', '500ms', '30s', '2m0s', '1m30s', '1h0m0s', '1h1m1s']);
  });

  it('maps the options onto KubeletConfiguration fields', () => {
    const c = kubeletConfigOf(resolveOptions({ authorizationMode: 'Webhook', anonymousAuth: false }, 'h'));
    expect(c).toMatchObject({
      kind: 'KubeletConfiguration',
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      port: 10250,
      maxPods: 110,
      syncFrequency: '1m0s',
      authentication: { anonymous: { enabled: false }, webhook: { enabled: true, cacheTTL: '2m0s' } },
      authorization: { mode: 'Webhook', webhook: { cacheAuthorizedTTL: '5m0s', cacheUnauthorizedTTL: '30s' } },
    });
  });
});

/** Containers a provider keeps across nodelet restarts: re-adopted by their pods, released when no pod claims them, left running on shutdown. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import type { AdoptableContainer, ContainerSpec, RunningContainer } from '../../../plugin-api/v1/index.ts';
import { PodController } from '../../../core/pods/pod-controller.ts';
import { predicateAdmitHandler } from '../../../core/pods/admission.ts';
import { fixedAllocatable } from '../../../core/pods/admit-handler.ts';
import { claimedContainerIds, releaseUnclaimedContainers } from '../../../core/pods/container-adoption.ts';
import { FakeContainer, FakeEvents, FakeProvider, FakeSink, fakeSetup, memoryLogger } from './fakes.ts';

/** A provider whose containers outlive nodelet: `kept` is what the previous process started. */
class KeepingProvider extends FakeProvider {
  readonly keepsContainers = true;
  readonly kept = new Map<string, FakeContainer>();
  readonly released: string[] = [];
  keep(id: string, name = 'main'): FakeContainer {
    const c = new FakeContainer(id, { name } as ContainerSpec);
    this.kept.set(id, c);
    return c;
  }
  async listContainers(): Promise<AdoptableContainer[]> {
    return [...this.kept.values()].map((c) => ({
      id: c.id,
      pod: { namespace: 'default', name: 'p', uid: 'uid-p' },
      name: c.spec.name,
      startedAt: c.startedAt,
    }));
  }
  async adoptContainer(id: string): Promise<RunningContainer | undefined> {
    return this.kept.get(id);
  }
  async releaseContainer(id: string): Promise<void> {
    this.released.push(id);
    await this.kept.get(id)?.stop(0);
    this.kept.delete(id);
  }
}

/** A pod whose API status says container `main` runs as `fake://<id>` (restarted `restarts` times). */
function runningPod(name: string, id: string, restarts = 2): V1Pod {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: { nodeName: 'node-a', restartPolicy: 'Always', containers: [{ name: 'main', image: 'registry.test/main:v1' }] },
    status: {
      phase: 'Running',
      containerStatuses: [
        {
          name: 'main',
          image: 'registry.test/main:v1',
          imageID: '',
          ready: true,
          restartCount: restarts,
          containerID: `fake://${id}`,
          state: { running: { startedAt: new Date('2026-01-01T00:00:00Z') } },
          lastState: { terminated: { exitCode: 1, reason: 'Error', startedAt: new Date(0), finishedAt: new Date(0), containerID: 'fake://old' } },
        },
      ],
    },
  };
}

const controllers: PodController[] = [];
afterEach(async () => {
  await Promise.all(controllers.splice(0).map((c) => c.shutdown()));
});

function setup() {
  const provider = new KeepingProvider();
  const sink = new FakeSink();
  const events = new FakeEvents();
  const ctrl = new PodController({
    nodeName: 'node-a',
    hostIP: '10.0.0.9',
    log: memoryLogger(),
    route: () => ({ provider }),
    setup: fakeSetup(),
    sink,
    events,
    admitNode: { nodeName: 'node-a', nodeLabels: {}, allocatable: [fixedAllocatable({ cpu: '4', memory: '4Gi', pods: '110' })] },
    admitHandlers: [predicateAdmitHandler],
    resyncMs: 3_600_000,
    backoff: { initialMs: 60_000, maxMs: 120_000 },
  });
  controllers.push(ctrl);
  return { provider, sink, events, ctrl };
}

const until = (fn: () => unknown) =>
  vi.waitFor(
    () => {
      if (!fn()) throw new Error('not yet');
    },
    { timeout: 5000, interval: 5 },
  );

describe('re-adoption after a nodelet restart', () => {
  it('a container the provider still runs is re-adopted: same ID, restart count and lastState, no start events, left running on shutdown', async () => {
    const { provider, sink, events, ctrl } = setup();
    const kept = provider.keep('abc');
    ctrl.upsert(runningPod('p', 'abc'));
    ctrl.start();
    await until(() => sink.last('default/p')?.containerStatuses?.[0]?.ready === true);
    const s = sink.last('default/p')!.containerStatuses![0]!;
    expect(s).toMatchObject({ containerID: 'fake://abc', restartCount: 2, lastState: { terminated: { reason: 'Error', exitCode: 1 } } });
    expect(s.state?.running).toBeDefined();
    expect(provider.started).toEqual([]);
    expect(events.lines().filter((l) => /^(Created|Started|Pulling)/.test(l))).toEqual([]);
    await ctrl.shutdown();
    expect(kept.stoppedWith).toBeUndefined();
    expect(kept.done).toBe(false);
  });

  it('an adopted container that ends is restarted by policy with the next restart count', async () => {
    const { provider, sink, ctrl } = setup();
    const kept = provider.keep('abc');
    ctrl.upsert(runningPod('p', 'abc'));
    ctrl.start();
    await until(() => sink.last('default/p')?.containerStatuses?.[0]?.ready === true);
    kept.end(3);
    await until(() => provider.started.length === 1);
    expect(provider.started[0]!.spec.restartCount).toBe(3);
  });

  it('a container the provider does not know ended with the previous process: ContainerStatusUnknown/137, then restarted', async () => {
    const { provider, sink, ctrl } = setup();
    ctrl.upsert(runningPod('p', 'gone'));
    ctrl.start();
    await until(() => provider.started.length === 1);
    expect(provider.started[0]!.spec.restartCount).toBe(3);
    await until(() => sink.last('default/p')?.containerStatuses?.[0]?.state?.running);
    expect(sink.last('default/p')!.containerStatuses![0]!.lastState?.terminated).toMatchObject({
      exitCode: 137,
      reason: 'ContainerStatusUnknown',
      containerID: 'fake://gone',
    });
  });
});

describe('releaseUnclaimedContainers', () => {
  it('releases what no pod status names as running and keeps the rest for their pods', async () => {
    const provider = new KeepingProvider();
    provider.keep('abc');
    const orphan = provider.keep('orphan');
    expect([...claimedContainerIds([runningPod('p', 'abc')])]).toEqual(['abc']);
    expect(await releaseUnclaimedContainers([provider], [runningPod('p', 'abc')], memoryLogger())).toBe(1);
    expect(provider.released).toEqual(['orphan']);
    expect(orphan.done).toBe(true);
    expect([...provider.kept.keys()]).toEqual(['abc']);
  });
});

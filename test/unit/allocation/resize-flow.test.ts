/**
 * A resize through the pod path: the pod controller (with its store and the allocation
 * manager, as the composition root wires them), a fake provider, the statuses it posts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { ContainerLimits } from '../../../plugin-api/v1/index.ts';
import { PodController } from '../../../core/pods/pod-controller.ts';
import { PodStore } from '../../../core/pods/pod-store.ts';
import { predicateAdmitHandler } from '../../../core/pods/admission.ts';
import { fixedAllocatable } from '../../../core/pods/admit-handler.ts';
import { observedGenerationContributor } from '../../../core/pods/observed-generation.ts';
import { AllocationManager } from '../../../core/allocation/allocation-manager.ts';
import { FakeEvents, FakeProvider, FakeSink, fakeSetup, memoryLogger } from '../pods/fakes.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((s) => s()));
});

class ResizingProvider extends FakeProvider {
  readonly resizes: Array<{ id: string; limits: ContainerLimits }> = [];
  async resizeContainer(id: string, limits: ContainerLimits) {
    this.resizes.push({ id, limits });
    return { applied: true };
  }
}

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-resize-flow-'));
  dirs.push(dir);
  const provider = new ResizingProvider();
  const store = new PodStore();
  const sink = new FakeSink();
  const events = new FakeEvents();
  const admitNode = { nodeName: 'node-a', nodeLabels: {}, allocatable: [fixedAllocatable({ cpu: '4', memory: '4Gi', pods: '110' })] };
  const allocation = new AllocationManager({
    dir,
    log: memoryLogger(),
    events,
    pods: store,
    admitNode,
    providerOf: () => provider,
    sourcesReady: () => true,
  });
  const ctrl = new PodController({
    store,
    nodeName: 'node-a',
    hostIP: '10.0.0.9',
    log: memoryLogger(),
    route: () => ({ provider }),
    setup: fakeSetup(),
    sink,
    events,
    admitNode,
    admitHandlers: [predicateAdmitHandler],
    resyncMs: 3_600_000,
    backoff: { initialMs: 60_000, maxMs: 120_000 },
    statusContributors: [observedGenerationContributor, allocation.statusContributor],
    allocation,
  });
  allocation.addAdmitHandlers([predicateAdmitHandler]);
  allocation.onResync((uids) => ctrl.resyncPods(uids));
  allocation.start();
  stops.push(async () => {
    await ctrl.shutdown();
    await allocation.stop();
  });
  return { provider, sink, events, ctrl };
}

function pod(memory: string, generation: number, o: { policy?: 'RestartContainer'; restartPolicy?: string } = {}): V1Pod {
  return {
    metadata: { name: 'p', namespace: 'ns', uid: 'uid-p', generation },
    spec: {
      restartPolicy: o.restartPolicy ?? 'Always',
      containers: [
        {
          name: 'main',
          image: 'img',
          resources: { requests: { memory }, limits: { memory } },
          ...(o.policy ? { resizePolicy: [{ resourceName: 'memory', restartPolicy: o.policy }] } : {}),
        },
      ],
    },
  };
}

const last = (sink: FakeSink) => sink.last('ns/p');
/** The condition types the status leaves on the server (a strategic-merge `$patch: delete` item removes its type). */
const types = (s: ReturnType<typeof last>) => (s?.conditions ?? []).filter((c) => !(c as { $patch?: string }).$patch).map((c) => c.type);

describe('a resize through the pod controller', () => {
  it("raises a running container's memory limit in place: no restart, resources and observedGeneration follow, conditions come and go", async () => {
    const t = setup();
    t.ctrl.upsert(pod('32Mi', 1));
    await vi.waitFor(() => expect(last(t.sink)?.containerStatuses?.[0]?.state?.running).toBeDefined());
    expect(last(t.sink)).toMatchObject({
      observedGeneration: 1,
      containerStatuses: [{ resources: { limits: { memory: '32Mi' }, requests: { memory: '32Mi' } }, allocatedResources: { memory: '32Mi' } }],
    });
    expect(t.provider.started[0]!.spec.limits).toEqual({ memoryBytes: 32 << 20 });
    t.ctrl.upsert(pod('64Mi', 2));
    await vi.waitFor(() => expect(last(t.sink)?.containerStatuses?.[0]?.resources?.limits?.memory).toBe('64Mi'));
    await vi.waitFor(() => expect(types(last(t.sink))).not.toContain('PodResizeInProgress'));
    expect(last(t.sink)!.conditions).toContainEqual({ type: 'PodResizeInProgress', $patch: 'delete' });
    expect(t.provider.resizes).toEqual([{ id: t.provider.started[0]!.id, limits: { memoryBytes: 64 << 20 } }]);
    expect(t.provider.started).toHaveLength(1);
    expect(last(t.sink)).toMatchObject({ observedGeneration: 2, containerStatuses: [{ restartCount: 0, allocatedResources: { memory: '64Mi' } }] });
    expect(last(t.sink)!.conditions!.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', observedGeneration: 2 });
    // While it was in progress, the condition was posted with the resize's generation.
    expect(t.sink.of('ns/p').some((s) => s.conditions?.some((c) => c.type === 'PodResizeInProgress' && c.observedGeneration === 2))).toBe(true);
    expect(t.events.list.map((e) => e.reason).filter((r) => r.startsWith('Resize'))).toEqual(['ResizeStarted', 'ResizeCompleted']);
  });

  it('restarts a container whose policy is RestartContainer with the new limit (restartCount 1), even under restartPolicy Never, and the pod stays Running', async () => {
    const t = setup();
    t.ctrl.upsert(pod('32Mi', 1, { policy: 'RestartContainer', restartPolicy: 'Never' }));
    await vi.waitFor(() => expect(last(t.sink)?.containerStatuses?.[0]?.state?.running).toBeDefined());
    t.ctrl.upsert(pod('64Mi', 2, { policy: 'RestartContainer', restartPolicy: 'Never' }));
    await vi.waitFor(() => expect(t.provider.started).toHaveLength(2));
    expect(t.provider.started[1]!.spec.limits).toEqual({ memoryBytes: 64 << 20 });
    expect(t.provider.resizes).toEqual([]);
    await vi.waitFor(() =>
      expect(last(t.sink)?.containerStatuses?.[0]).toMatchObject({ restartCount: 1, state: { running: {} }, resources: { limits: { memory: '64Mi' } } }),
    );
    expect(t.sink.of('ns/p').every((s) => s.phase !== 'Failed')).toBe(true);
    expect(t.events.lines()).toContain('Killing: Container main resize requires restart');
  });
});

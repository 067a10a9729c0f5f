import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { withObservedGeneration } from '../../../core/pods/observed-generation.ts';

const T = new Date('2026-01-01T00:00:00Z');
const status = (): V1PodStatus => ({
  phase: 'Running',
  conditions: [
    { type: 'PodReadyToStartContainers', status: 'True', lastTransitionTime: T },
    { type: 'Initialized', status: 'True', lastTransitionTime: T },
    { type: 'ContainersReady', status: 'True', lastTransitionTime: T },
    { type: 'Ready', status: 'True', lastTransitionTime: T },
    { type: 'PodScheduled', status: 'True', lastTransitionTime: T },
    { type: 'PodResizePending', status: 'True', reason: 'Deferred', observedGeneration: 2, lastTransitionTime: T },
    { type: 'DisruptionTarget', status: 'True', lastTransitionTime: T },
  ],
});
const pod = (generation: number | undefined, observed?: number): V1Pod => ({ metadata: { uid: 'u', generation }, status: { observedGeneration: observed } });

describe('observedGeneration (upstream CalculatePodStatusObservedGeneration, CalculatePodConditionObservedGeneration)', () => {
  it("is the pod's generation, on the status and on the conditions nodelet owns; other conditions keep theirs", () => {
    const s = withObservedGeneration(pod(3), status());
    expect(s.observedGeneration).toBe(3);
    expect(Object.fromEntries(s.conditions!.map((c) => [c.type, c.observedGeneration]))).toEqual({
      PodReadyToStartContainers: 3,
      Initialized: 3,
      ContainersReady: 3,
      Ready: 3,
      PodScheduled: 3,
      PodResizePending: 2,
      DisruptionTarget: undefined,
    });
  });

  it('never goes below what the server already shows (a status computed from an older copy of the pod)', () => {
    expect(withObservedGeneration(pod(3, 5), status()).observedGeneration).toBe(5);
  });

  it('adds PodScheduled=True to the status of a pod that runs here and has none (bound without the scheduler)', () => {
    const s = status();
    s.conditions = s.conditions!.filter((c) => c.type !== 'PodScheduled');
    const out = withObservedGeneration(pod(1), s);
    expect(out.conditions!.find((c) => c.type === 'PodScheduled')).toMatchObject({ status: 'True', observedGeneration: 1 });
    expect(withObservedGeneration(pod(1), { phase: 'Failed', reason: 'OutOfcpu' }).conditions).toBeUndefined();
  });

  it('leaves a status alone when the pod has no generation (a static pod)', () => {
    const s = status();
    expect(withObservedGeneration(pod(undefined), s)).toBe(s);
  });
});

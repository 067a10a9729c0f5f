import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { resizeStatus, runningResources } from '../../../core/allocation/resize-status.ts';
import type { ResizeCondition } from '../../../core/allocation/resize-conditions.ts';

const T = new Date('2026-01-02T03:04:05Z');
const allocated: V1Pod = {
  metadata: { uid: 'u', generation: 2 },
  spec: {
    initContainers: [{ name: 'init', image: 'x', resources: { requests: { cpu: '100m' } } }],
    containers: [
      { name: 'run', image: 'x', resources: { requests: { cpu: '1', memory: '40Mi' }, limits: { cpu: '1', memory: '50Mi' } } },
      { name: 'done', image: 'x', resources: { limits: { memory: '10Mi' } } },
      { name: 'new', image: 'x', resources: { requests: { cpu: '1' } } },
      { name: 'none', image: 'x' },
    ],
  },
};
const status: V1PodStatus = {
  phase: 'Running',
  conditions: [{ type: 'Ready', status: 'True' }],
  initContainerStatuses: [
    { name: 'init', image: 'x', imageID: '', ready: true, restartCount: 0, containerID: 'w://i', state: { terminated: { exitCode: 0 } } },
  ],
  containerStatuses: [
    { name: 'run', image: 'x', imageID: '', ready: true, restartCount: 0, containerID: 'w://r', state: { running: {} } },
    { name: 'done', image: 'x', imageID: '', ready: false, restartCount: 1, containerID: 'w://d', state: { terminated: { exitCode: 1 } } },
    { name: 'new', image: 'x', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } },
    { name: 'none', image: 'x', imageID: '', ready: true, restartCount: 0, containerID: 'w://n', state: { running: {} } },
  ],
};
const inProgress: ResizeCondition = {
  type: 'PodResizeInProgress',
  status: 'True',
  reason: '',
  message: '',
  observedGeneration: 2,
  lastProbeTime: T,
  lastTransitionTime: T,
};

describe('the resize part of a pod status', () => {
  const out = resizeStatus({
    pod: { ...allocated, status: { conditions: [{ type: 'PodResizePending', status: 'True', reason: 'Deferred' }] } },
    status,
    allocated,
    conditions: [inProgress],
    reportResources: true,
    // The run still has the memory limit it started with.
    actuated: (name) => (name === 'run' ? { requests: { cpu: '1', memory: '40Mi' }, limits: { cpu: '1', memory: '30Mi' } } : undefined),
  });

  it('reports what a running container really has, what a stopped one is allocated, nothing for one that never ran (upstream convertToAPIContainerStatuses)', () => {
    const [run, done, fresh, none] = out.containerStatuses!;
    expect(run).toMatchObject({
      resources: { limits: { cpu: '1', memory: '30Mi' }, requests: { cpu: '1', memory: '40Mi' } },
      allocatedResources: { cpu: '1', memory: '40Mi' },
    });
    expect(done!.resources).toEqual({ limits: { memory: '10Mi' } });
    expect(done!.allocatedResources).toBeUndefined();
    expect(fresh!.resources).toBeUndefined();
    // A running container without resources reports an empty object: what the apiserver asks for to allow a resize.
    expect(none!.resources).toEqual({});
    expect(out.initContainerStatuses![0]).toMatchObject({ resources: { requests: { cpu: '100m' } }, allocatedResources: { cpu: '100m' } });
  });

  it('adds the current resize conditions and deletes (strategic merge) one the server shows that no longer holds', () => {
    expect(out.conditions).toEqual([{ type: 'Ready', status: 'True' }, { ...inProgress }, { type: 'PodResizePending', $patch: 'delete' }]);
  });

  it('reports no resources for a pod whose provider runs whole pods', () => {
    const o = resizeStatus({ pod: allocated, status, allocated, conditions: [], reportResources: false, actuated: () => undefined });
    expect(o.containerStatuses).toBe(status.containerStatuses);
    expect(o.conditions).toEqual(status.conditions);
  });

  it('a running value the run does not have is left out', () => {
    expect(runningResources({ limits: { memory: '50Mi', 'example.com/x': '1' } }, { limits: {} })).toEqual({ limits: { 'example.com/x': '1' } });
    expect(runningResources({ requests: { cpu: '1' } }, { requests: {} })).toEqual({});
  });
});

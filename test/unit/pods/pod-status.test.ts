import { describe, expect, it } from 'vitest';
import type { V1Pod, V1PodCondition } from '@kubernetes/client-node';
import type { RunningContainer } from '../../../plugin-api/v1/index.ts';
import { newRecord, type ContainerRecord } from '../../../core/pods/container-record.ts';
import { computePodStatus, mergePodConditions, podPhase } from '../../../core/pods/pod-status.ts';

const T0 = new Date('2024-01-01T00:00:00Z');
const T1 = new Date('2024-01-01T00:01:00Z');

const live: RunningContainer = { id: 'c1', startedAt: T0, exit: new Promise(() => undefined), stop: async () => undefined };
const term = (exitCode: number) => ({ exitCode, reason: exitCode ? 'Error' : 'Completed', startedAt: T0, finishedAt: T1, containerID: 'wasi://old' });

/** Record builders by state letter. */
const rec = {
  /** never started (ContainerCreating) */
  w: (n: string, init = false): ContainerRecord => newRecord(n, init),
  /** running */
  r: (n: string, init = false): ContainerRecord => ({ ...newRecord(n, init), waiting: undefined, running: live, containerID: 'wasi://c1', startedAt: T0 }),
  /** exited for good (state terminated) */
  t: (n: string, code: number, init = false): ContainerRecord => ({ ...newRecord(n, init), waiting: undefined, terminated: term(code) }),
  /** exited and waiting to restart (state waiting, lastState terminated) */
  b: (n: string, code: number, init = false): ContainerRecord => ({
    ...newRecord(n, init, 1),
    waiting: { reason: 'CrashLoopBackOff', message: 'back-off' },
    terminated: term(code),
  }),
};

function pod(restartPolicy: string, app: string[], init: string[] = [], conditions?: V1PodCondition[]): V1Pod {
  return {
    metadata: { name: 'p', namespace: 'default', uid: 'u' },
    spec: {
      restartPolicy,
      containers: app.map((name) => ({ name, image: `img-${name}` })),
      initContainers: init.map((name) => ({ name, image: `img-${name}` })),
    },
    status: conditions ? { conditions } : undefined,
  };
}

describe('podPhase (upstream getPhase)', () => {
  type Row = [string, string, ContainerRecord[], ContainerRecord[]];
  const rows: Row[] = [
    // init containers
    ['Never', 'Pending', [rec.r('i', true)], [rec.w('a')]],
    ['Never', 'Failed', [rec.t('i', 1, true)], [rec.w('a')]],
    ['OnFailure', 'Pending', [rec.b('i', 1, true)], [rec.w('a')]],
    ['Always', 'Pending', [rec.b('i', 1, true)], [rec.w('a')]],
    ['Never', 'Pending', [rec.t('i1', 0, true), rec.w('i2', true)], [rec.w('a')]],
    ['Never', 'Pending', [rec.t('i1', 0, true), rec.t('i2', 0, true)], [rec.w('a')]],
    ['OnFailure', 'Running', [rec.t('i', 0, true)], [rec.r('a')]],
    ['Never', 'Succeeded', [rec.t('i', 0, true)], [rec.t('a', 0)]],
    // app containers, Always
    ['Always', 'Pending', [], [rec.w('a')]],
    ['Always', 'Pending', [], [rec.r('a'), rec.w('b')]],
    ['Always', 'Running', [], [rec.r('a'), rec.r('b')]],
    ['Always', 'Running', [], [rec.t('a', 0)]],
    ['Always', 'Running', [], [rec.b('a', 1)]],
    ['Always', 'Running', [], [rec.b('a', 0), rec.r('b')]],
    // OnFailure
    ['OnFailure', 'Succeeded', [], [rec.t('a', 0), rec.t('b', 0)]],
    ['OnFailure', 'Running', [], [rec.b('a', 1), rec.t('b', 0)]],
    ['OnFailure', 'Running', [], [rec.t('a', 0), rec.r('b')]],
    ['OnFailure', 'Running', [], [rec.t('a', 1)]],
    // Never
    ['Never', 'Succeeded', [], [rec.t('a', 0)]],
    ['Never', 'Failed', [], [rec.t('a', 0), rec.t('b', 2)]],
    ['Never', 'Running', [], [rec.t('a', 2), rec.r('b')]],
    ['Never', 'Pending', [], [rec.t('a', 2), rec.w('b')]],
  ];
  it.each(rows)('restartPolicy %s → %s', (policy, phase, init, app) => {
    expect(
      podPhase(
        pod(
          policy,
          app.map((c) => c.name),
          init.map((c) => c.name),
        ),
        init,
        app,
      ),
    ).toBe(phase);
  });

  it('defaults the restart policy to Always', () => {
    const p = pod('Always', ['a']);
    delete p.spec!.restartPolicy;
    expect(podPhase(p, [], [rec.t('a', 0)])).toBe('Running');
  });
});

const status = (p: V1Pod, init: ContainerRecord[], app: ContainerRecord[], now = T1, sandboxReady = true) =>
  computePodStatus({ pod: p, init, app, hostIP: '10.0.0.5', startTime: T0, sandboxReady, now });

const cond = (s: ReturnType<typeof status>, type: string) => {
  const c = s.conditions!.find((x) => x.type === type)!;
  return { status: c.status, reason: c.reason, message: c.message };
};

describe('computePodStatus conditions', () => {
  it('is ready when every container runs', () => {
    const s = status(pod('Always', ['a', 'b']), [], [rec.r('a'), rec.r('b')]);
    expect(s.phase).toBe('Running');
    for (const t of ['Initialized', 'ContainersReady', 'Ready', 'PodReadyToStartContainers'])
      expect(cond(s, t)).toEqual({ status: 'True', reason: null, message: null });
    expect(s.hostIP).toBe('10.0.0.5');
    expect(s.hostIPs).toEqual([{ ip: '10.0.0.5' }]);
    expect(s.startTime).toBe(T0);
  });

  it('names unready containers in upstream format', () => {
    const s = status(pod('Always', ['a', 'b', 'c']), [], [rec.r('a'), rec.w('b'), rec.b('c', 1)]);
    const expected = { status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [b c]' };
    expect(cond(s, 'ContainersReady')).toEqual(expected);
    expect(cond(s, 'Ready')).toEqual(expected);
  });

  it('names incomplete init containers', () => {
    const s = status(pod('Always', ['a'], ['i1', 'i2', 'i3']), [rec.t('i1', 0, true), rec.r('i2', true), rec.w('i3', true)], [rec.w('a')]);
    expect(cond(s, 'Initialized')).toEqual({ status: 'False', reason: 'ContainersNotInitialized', message: 'containers with incomplete status: [i2 i3]' });
    expect(s.phase).toBe('Pending');
  });

  it('uses PodCompleted for a Succeeded pod (Initialized stays True)', () => {
    const s = status(pod('Never', ['a'], ['i']), [rec.t('i', 0, true)], [rec.t('a', 0)]);
    expect(s.phase).toBe('Succeeded');
    expect(cond(s, 'ContainersReady')).toEqual({ status: 'False', reason: 'PodCompleted', message: null });
    expect(cond(s, 'Ready')).toEqual({ status: 'False', reason: 'PodCompleted', message: null });
    expect(cond(s, 'Initialized')).toEqual({ status: 'True', reason: 'PodCompleted', message: null });
    expect(cond(s, 'PodReadyToStartContainers').status).toBe('False');
  });

  it('uses PodFailed for a Failed pod', () => {
    const s = status(pod('Never', ['a']), [], [rec.t('a', 3)]);
    expect(s.phase).toBe('Failed');
    expect(cond(s, 'ContainersReady')).toEqual({ status: 'False', reason: 'PodFailed', message: null });
    expect(cond(s, 'Ready')).toEqual({ status: 'False', reason: 'PodFailed', message: null });
  });

  it('reports the sandbox as not ready before volumes are prepared', () => {
    expect(cond(status(pod('Always', ['a']), [], [rec.w('a')], T1, false), 'PodReadyToStartContainers').status).toBe('False');
  });
});

describe('computePodStatus container statuses', () => {
  it('maps running, waiting and restarting containers with their last state', () => {
    const s = status(pod('Always', ['a', 'b', 'c']), [], [rec.r('a'), rec.w('b'), rec.b('c', 7)]);
    const [a, b, c] = s.containerStatuses!;
    expect(a).toMatchObject({
      name: 'a',
      image: 'img-a',
      ready: true,
      started: true,
      containerID: 'wasi://c1',
      state: { running: { startedAt: T0 } },
      lastState: {},
    });
    expect(b).toMatchObject({ name: 'b', image: 'img-b', ready: false, started: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } });
    expect(b!.containerID).toBeUndefined();
    expect(c).toMatchObject({
      name: 'c',
      restartCount: 1,
      state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off' } },
      lastState: { terminated: { exitCode: 7, reason: 'Error', startedAt: T0, finishedAt: T1, containerID: 'wasi://old' } },
    });
    expect(s.initContainerStatuses).toBeUndefined();
  });

  it('keeps the previous run in lastState while running again', () => {
    const r = { ...rec.r('a'), last: term(1), restartCount: 1 };
    expect(status(pod('Always', ['a']), [], [r]).containerStatuses![0]).toMatchObject({
      restartCount: 1,
      state: { running: {} },
      lastState: { terminated: { exitCode: 1 } },
    });
  });

  it('reports a completed init container as ready and a running one as not ready (upstream prober rules)', () => {
    const s = status(pod('Always', ['a'], ['i1', 'i2']), [rec.t('i1', 0, true), rec.r('i2', true)], [rec.w('a')]);
    expect(s.initContainerStatuses!.map((c) => [c.name, c.ready, c.started])).toEqual([
      ['i1', true, false],
      ['i2', false, true],
    ]);
    expect(s.initContainerStatuses![0]).toMatchObject({ image: 'img-i1', state: { terminated: { exitCode: 0, reason: 'Completed' } } });
  });

  it('reports a failed init container as not ready', () => {
    const s = status(pod('Never', ['a'], ['i']), [rec.t('i', 1, true)], [rec.w('a')]);
    expect(s.initContainerStatuses![0]!.ready).toBe(false);
  });
});

describe('mergePodConditions', () => {
  const prev: V1PodCondition[] = [
    { type: 'PodScheduled', status: 'True', lastTransitionTime: T0 },
    { type: 'Ready', status: 'False', reason: 'ContainersNotReady', lastTransitionTime: T0 },
    { type: 'Initialized', status: 'True', lastTransitionTime: T0 },
  ];

  it('keeps lastTransitionTime while the status is unchanged and moves it on a change', () => {
    const out = mergePodConditions(
      prev,
      [
        { type: 'Ready', status: 'True' },
        { type: 'Initialized', status: 'True' },
      ],
      T1,
    );
    expect(out.find((c) => c.type === 'Ready')!.lastTransitionTime).toBe(T1);
    expect(out.find((c) => c.type === 'Initialized')!.lastTransitionTime).toBe(T0);
  });

  it('keeps conditions it does not own (PodScheduled) untouched', () => {
    const out = mergePodConditions(prev, [{ type: 'Ready', status: 'True' }], T1);
    expect(out.find((c) => c.type === 'PodScheduled')).toEqual(prev[0]);
    expect(out.filter((c) => c.type === 'Ready')).toHaveLength(1);
  });

  it('stamps new conditions with now', () => {
    expect(mergePodConditions(undefined, [{ type: 'Ready', status: 'False' }], T1)[0]!.lastTransitionTime).toBe(T1);
  });

  it("is used by computePodStatus against the pod's previous conditions", () => {
    const p = pod('Always', ['a'], [], [{ type: 'Ready', status: 'True', lastTransitionTime: T0 }]);
    const s = status(p, [], [rec.r('a')], T1);
    expect(s.conditions!.find((c) => c.type === 'Ready')!.lastTransitionTime).toBe(T0);
    expect(s.conditions!.find((c) => c.type === 'ContainersReady')!.lastTransitionTime).toBe(T1);
  });
});

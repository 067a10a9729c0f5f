import { afterEach, describe, expect, it, vi } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { providerError } from '../../../plugin-api/v1/index.ts';
import { PodController, type PodControllerOptions } from '../../../core/pods/pod-controller.ts';
import { predicateAdmitHandler } from '../../../core/pods/admission.ts';
import { fixedAllocatable } from '../../../core/pods/admit-handler.ts';
import { FakeEvents, FakeProvider, FakeSink, fakeSetup, memoryLogger } from './fakes.ts';
import { PodStarts } from '../../../core/pods/pod-starts.ts';

interface PodOpts {
  restartPolicy?: string;
  containers?: string[];
  init?: string[];
  spec?: Partial<V1Pod['spec']>;
}

function pod(name: string, o: PodOpts = {}): V1Pod {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: {
      nodeName: 'node-a',
      restartPolicy: o.restartPolicy ?? 'Always',
      containers: (o.containers ?? ['main']).map((n) => ({ name: n, image: `registry.test/${n}:v1` })),
      initContainers: o.init?.map((n) => ({ name: n, image: `registry.test/${n}:v1` })),
      ...o.spec,
    },
  };
}

const controllers: PodController[] = [];
afterEach(async () => {
  await Promise.all(controllers.splice(0).map((c) => c.shutdown()));
});

function setupController(over: Partial<PodControllerOptions> = {}) {
  const provider = new FakeProvider();
  const setup = fakeSetup();
  const sink = new FakeSink();
  const events = new FakeEvents();
  const logs: string[] = [];
  const ctrl = new PodController({
    nodeName: 'node-a',
    hostIP: '10.0.0.9',
    log: memoryLogger(logs),
    route: () => ({ provider }),
    setup,
    sink,
    events,
    admitNode: { nodeName: 'node-a', nodeLabels: { zone: 'z1' }, allocatable: [fixedAllocatable({ cpu: '4', memory: '4Gi', pods: '110' })] },
    admitHandlers: [predicateAdmitHandler],
    resyncMs: 3_600_000,
    backoff: { initialMs: 60_000, maxMs: 120_000 },
    ...over,
  });
  controllers.push(ctrl);
  return { provider, setup, sink, events, logs, ctrl };
}

const until = (fn: () => unknown) =>
  vi.waitFor(
    () => {
      if (!fn()) throw new Error('not yet');
    },
    { timeout: 5000, interval: 5 },
  );
const waitingReason = (s: { containerStatuses?: { state?: { waiting?: { reason?: string } } }[] } | undefined, i = 0) =>
  s?.containerStatuses?.[i]?.state?.waiting?.reason;

/** Makes the provider's pulls wait until the returned function is called. */
function holdPulls(provider: FakeProvider): () => void {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const pull = provider.pullImage.bind(provider);
  provider.pullImage = async (...a) => {
    await held;
    return pull(...a);
  };
  return release;
}

/** Makes the pod set-up's volume preparation wait until the returned gate's `open()` is called. */
function holdVolumes(setup: ReturnType<typeof fakeSetup>): { open?: () => void } {
  const gate: { open?: () => void } = {};
  setup.prepare = async () => {
    await new Promise<void>((r) => (gate.open = r));
    return new Map();
  };
  return gate;
}

/** The events of a pull of registry.test/main:v1 that fails with "manifest unknown", then of its back-off, in upstream's order. */
const PULL_FAILED_EVENTS = [
  'Pulling: Pulling image "registry.test/main:v1"',
  'Failed: Failed to pull image "registry.test/main:v1": failed to pull image "registry.test/main:v1": manifest unknown',
  'Failed: Error: ErrImagePull',
  'BackOff: Back-off pulling image "registry.test/main:v1"',
  'Failed: Error: ImagePullBackOff',
];

describe('PodController', () => {
  it('counts a pod in its first sync until its status after it was posted, and not its later syncs', async () => {
    const starts = new PodStarts();
    const { provider, sink, ctrl } = setupController({ starts });
    const releasePull = holdPulls(provider);
    ctrl.upsert(pod('first'));
    ctrl.upsert(pod('second'));
    await until(() => starts.active === 2);
    const idle = starts.settled()!;
    releasePull();
    await idle;
    // The burst ended once one of them had its Running status posted.
    expect(['default/first', 'default/second'].some((k) => sink.last(k)?.phase === 'Running')).toBe(true);
    await until(() => starts.active === 0);
    expect(sink.last('default/first')?.phase).toBe('Running');
    expect(sink.last('default/second')?.phase).toBe('Running');
    ctrl.resyncPods(['uid-first']);
    await new Promise((r) => setTimeout(r, 20)); // a fixed wait: the resync must not start the pod again
    expect(starts.active).toBe(0);
  });

  it('posts interim statuses of slow first syncs at most 4 at once, and none for a pod whose sync ended before its turn', async () => {
    const { provider, sink, ctrl } = setupController();
    const releasePulls = holdPulls(provider);
    // Interim (Pending) posts hang until released, so they hold their places.
    let releasePending!: () => void;
    const pending = new Promise<void>((r) => (releasePending = r));
    let inFlight = 0;
    const patch = sink.patchStatus.bind(sink);
    sink.patchStatus = async (p, st) => {
      if (st.phase === 'Pending') {
        inFlight++;
        await pending;
        inFlight--;
      }
      return patch(p, st);
    };
    const names = Array.from({ length: 12 }, (_, i) => `slow-${i}`);
    for (const n of names) ctrl.upsert(pod(n));
    await until(() => inFlight === 4); // after the 1 s interim delay
    await new Promise((r) => setTimeout(r, 150)); // a fixed wait: no fifth interim post may start meanwhile
    expect(inFlight).toBe(4);
    releasePulls();
    // The 8 pods without an interim post in flight post Running; the other 4 wait behind theirs.
    await until(() => names.filter((n) => sink.of(`default/${n}`).some((st) => st.phase === 'Running')).length === 8);
    releasePending();
    await until(() => names.every((n) => sink.last(`default/${n}`)?.phase === 'Running'));
    const interims = names.filter((n) => sink.of(`default/${n}`).some((st) => st.phase === 'Pending'));
    expect(interims).toHaveLength(4);
    for (const n of interims) expect(waitingReason(sink.of(`default/${n}`)[0])).toBe('ContainerCreating');
    for (const n of names) expect(sink.of(`default/${n}`).at(-1)?.phase).toBe('Running');
  });

  it('holds the interim statuses of a burst of slow first syncs until the yield ends; a pod starting alone shows ContainerCreating after 1 s', async () => {
    const starts = new PodStarts();
    const { provider, sink, ctrl } = setupController({ starts, interimYieldMs: 2500 });
    const releasePulls = holdPulls(provider);
    const pendingOf = (n: string) => sink.of(`default/${n}`).filter((st) => st.phase === 'Pending');
    const alone = Date.now();
    ctrl.upsert(pod('alone'));
    await until(() => pendingOf('alone').length === 1);
    expect(Date.now() - alone).toBeLessThan(2500); // posted at ~1 s, not held for the yield
    expect(waitingReason(pendingOf('alone')[0])).toBe('ContainerCreating');

    const names = ['b-0', 'b-1', 'b-2'];
    for (const n of names) ctrl.upsert(pod(n));
    await until(() => starts.active === 4);
    await new Promise((r) => setTimeout(r, 1500)); // a fixed wait: past the 1 s interim delay, inside the 2.5 s yield (the yield is what is tested)
    expect(names.map((n) => pendingOf(n).length)).toEqual([0, 0, 0]);
    await until(() => names.every((n) => pendingOf(n).length === 1)); // the yield's bound
    releasePulls();
    await until(() => [...names, 'alone'].every((n) => sink.last(`default/${n}`)?.phase === 'Running'));
  });

  it('a shutdown does not wait for an interim status held by a burst', async () => {
    const starts = new PodStarts();
    const others = [starts.begin(), starts.begin()]; // a burst that outlasts this pod's start
    const { provider, sink, ctrl } = setupController({ starts, interimYieldMs: 60_000 });
    const releasePull = holdPulls(provider);
    ctrl.upsert(pod('held'));
    await new Promise((r) => setTimeout(r, 1300)); // a fixed wait: past the 1 s interim delay, the post must still wait for the burst
    expect(sink.of('default/held').filter((st) => st.phase === 'Pending')).toHaveLength(0);
    releasePull();
    await until(() => sink.last('default/held')?.phase === 'Running');
    const t = Date.now();
    await ctrl.shutdown();
    expect(Date.now() - t).toBeLessThan(3000);
    others.forEach((end) => end());
  });

  it('runs a pod to Succeeded with upstream events and the resolved container spec', async () => {
    const { provider, sink, events, ctrl } = setupController();
    provider.autoExit.main = 0;
    ctrl.upsert(pod('ok', { restartPolicy: 'Never' }));
    await until(() => sink.last('default/ok')?.phase === 'Succeeded');
    const s = sink.last('default/ok')!;
    expect(s.containerStatuses![0]).toMatchObject({
      name: 'main',
      ready: false,
      restartCount: 0,
      imageID: 'registry.test/main:v1@sha256:00',
      state: { terminated: { exitCode: 0, reason: 'Completed' } },
    });
    expect(s.containerStatuses![0]!.containerID).toMatch(/^fake:\/\//);
    expect(sink.of('default/ok').map((x) => x.phase)).toContain('Running');
    const spec = provider.started[0]!.spec;
    expect(spec).toMatchObject({
      name: 'main',
      pod: { namespace: 'default', name: 'ok', uid: 'uid-ok' },
      env: { A: '1' },
      argv: ['main'],
      restartCount: 0,
      logPath: '/nonexistent/main/0.log',
    });
    expect(events.lines()).toEqual([
      'Pulling: Pulling image "registry.test/main:v1"',
      expect.stringMatching(/^Pulled: Successfully pulled image "registry.test\/main:v1" in \d+\.\d{3}s\. Image size: 42 bytes\.$/),
      'Created: Created container: main',
      'Started: Started container main',
    ]);
    expect(events.list[0]!.regarding).toMatchObject({ kind: 'Pod', namespace: 'default', name: 'ok', uid: 'uid-ok', fieldPath: 'spec.containers{main}' });
    expect(provider.started).toHaveLength(1);
  });

  it('an image already present under IfNotPresent gets Pulled (already present) and no Pulling, as upstream', async () => {
    const { provider, sink, events, ctrl } = setupController();
    provider.present.add('registry.test/main:v1');
    ctrl.upsert(pod('present'));
    await until(() => sink.last('default/present')?.phase === 'Running');
    expect(events.lines()).toEqual([
      'Pulled: Container image "registry.test/main:v1" already present on machine',
      'Created: Created container: main',
      'Started: Started container main',
    ]);
  });

  it('a resync of a running pod whose status did not change posts no PATCH', async () => {
    const { sink, ctrl } = setupController();
    const p = pod('steady');
    ctrl.upsert(p);
    await until(() => sink.last('default/steady')?.phase === 'Running');
    const n = sink.of('default/steady').length;
    // A changed pod object (new resourceVersion, e.g. the echo of our own patch) syncs it again.
    ctrl.upsert({ ...p, metadata: { ...p.metadata, resourceVersion: '2', labels: { x: 'y' } } });
    await new Promise((r) => setTimeout(r, 50)); // a fixed wait: the sync must post nothing
    expect(sink.of('default/steady').length).toBe(n);
  });

  it('OnFailure restarts at once the first time, then waits in CrashLoopBackOff with upstream message', async () => {
    const { provider, sink, events, ctrl } = setupController();
    provider.autoExit.main = 1;
    ctrl.upsert(pod('crash', { restartPolicy: 'OnFailure' }));
    await until(() => waitingReason(sink.last('default/crash')) === 'CrashLoopBackOff');
    expect(provider.started).toHaveLength(2);
    expect(provider.started[1]!.spec.restartCount).toBe(1);
    const s = sink.last('default/crash')!;
    expect(s.phase).toBe('Running');
    expect(s.containerStatuses![0]).toMatchObject({
      restartCount: 1,
      state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 1m0s restarting failed container=main pod=crash_default(uid-crash)' } },
      lastState: { terminated: { exitCode: 1, reason: 'Error' } },
    });
    expect(events.list).toContainEqual(
      expect.objectContaining({ type: 'Warning', reason: 'BackOff', note: 'Back-off restarting failed container main in pod crash_default(uid-crash)' }),
    );
  });

  it('restarts again once the back-off has passed', async () => {
    const { provider, sink, ctrl } = setupController({ backoff: { initialMs: 20, maxMs: 40 } });
    provider.autoExit.main = 1;
    ctrl.upsert(pod('again', { restartPolicy: 'Always' }));
    await until(() => provider.started.length >= 3);
    expect(provider.started.map((c) => c.spec.restartCount).slice(0, 3)).toEqual([0, 1, 2]);
    await until(() => (sink.last('default/again')?.containerStatuses?.[0]?.restartCount ?? 0) >= 2);
  });

  it("unmounts a finished pod's volumes once, before and without its deletion (upstream syncTerminatedPod); a running pod's are kept", async () => {
    const { provider, sink, setup, ctrl } = setupController();
    provider.autoExit = { done: 0 };
    ctrl.upsert(pod('runs'));
    ctrl.upsert(pod('job', { restartPolicy: 'Never', containers: ['done'] }));
    await until(() => sink.last('default/job')?.phase === 'Succeeded' && setup.unmounts.length === 1);
    await until(() => sink.last('default/runs')?.phase === 'Running');
    expect(setup.unmounts).toEqual(['uid-job']);
    expect(setup.teardowns).toEqual([]);
    expect(sink.deleted).toEqual([]);
  });

  it("retries unmounting a finished pod's volumes after a failure, with the volume back-off", async () => {
    const { provider, sink, setup, logs, ctrl } = setupController();
    provider.autoExit = { done: 1 };
    setup.unmountFailures = 1;
    ctrl.upsert(pod('job', { restartPolicy: 'Never', containers: ['done'] }));
    await until(() => setup.unmounts.length === 1);
    expect(sink.last('default/job')?.phase).toBe('Failed');
    expect(logs.some((l) => l.includes('unmounting the volumes of a finished pod failed, will retry'))).toBe(true);
  });

  it('a pod already finished when first seen (nodelet restarted) is not run, and its volumes are unmounted', async () => {
    const { provider, setup, ctrl } = setupController();
    ctrl.upsert({ ...pod('old', { restartPolicy: 'Never' }), status: { phase: 'Succeeded' } });
    await until(() => setup.unmounts.length === 1);
    expect(setup.unmounts).toEqual(['uid-old']);
    expect(provider.started).toEqual([]);
  });

  it('does not restart a container that succeeded under OnFailure', async () => {
    const { provider, sink, ctrl } = setupController();
    provider.autoExit = { a: 0, b: 0 };
    ctrl.upsert(pod('done', { restartPolicy: 'OnFailure', containers: ['a', 'b'] }));
    await until(() => sink.last('default/done')?.phase === 'Succeeded');
    expect(provider.names().sort()).toEqual(['a', 'b']);
  });

  it('reports ErrImagePull, then ImagePullBackOff without pulling again during the back-off', async () => {
    const { provider, sink, events, ctrl } = setupController();
    provider.pullError = (image) => providerError('ImagePull', `failed to pull image "${image}": manifest unknown`, { reason: 'ErrImagePull' });
    ctrl.upsert(pod('nopull'));
    await until(() => waitingReason(sink.last('default/nopull')) === 'ImagePullBackOff');
    const reasons = sink.of('default/nopull').map((s) => waitingReason(s));
    expect(reasons).toEqual(['ErrImagePull', 'ImagePullBackOff']);
    const [first, second] = sink.of('default/nopull');
    expect(first!.phase).toBe('Pending');
    expect(first!.containerStatuses![0]!.state!.waiting!.message).toBe('failed to pull image "registry.test/main:v1": manifest unknown');
    expect(second!.containerStatuses![0]!.state!.waiting!.message).toBe(
      'Back-off pulling image "registry.test/main:v1": failed to pull image "registry.test/main:v1": manifest unknown',
    );
    expect(provider.pulls).toHaveLength(1);
    expect(provider.started).toHaveLength(0);
    expect(events.lines()).toEqual(PULL_FAILED_EVENTS);
  });

  it('on deletion stops containers with the grace period, posts the final status, tears down and deletes the pod', async () => {
    const { provider, sink, setup, events, ctrl } = setupController();
    const p = pod('del', { containers: ['a', 'b'] });
    ctrl.upsert(p);
    await until(() => sink.last('default/del')?.phase === 'Running' && provider.started.length === 2);
    ctrl.upsert({ ...p, metadata: { ...p.metadata, deletionTimestamp: new Date(), deletionGracePeriodSeconds: 7 } });
    await until(() => sink.deleted.length === 1);
    expect(provider.started.map((c) => c.stoppedWith)).toEqual([7000, 7000]);
    expect(events.lines()).toEqual(expect.arrayContaining(['Killing: Stopping container a', 'Killing: Stopping container b']));
    const final = sink.last('default/del')!;
    expect(final.containerStatuses!.map((c) => c.state?.terminated?.exitCode)).toEqual([137, 137]);
    expect(sink.ops.at(-1)).toBe('delete');
    expect(sink.ops.at(-2)).toMatch(/^patch /);
    expect(setup.teardowns).toEqual(['uid-del']);
    expect(sink.deleted).toEqual(['default/del']);
    // The object's DELETED event then finds nothing left to tear down.
    ctrl.remove('default/del');
    await until(() => ctrl.pods().length === 0);
    await new Promise((r) => setTimeout(r, 20)); // a fixed wait: no second teardown may follow
    expect(setup.teardowns).toEqual(['uid-del']);
  });

  it('a deletion aborts a container start in flight at once (a start that only ends when its signal aborts)', async () => {
    const { provider, sink, events, ctrl } = setupController();
    const aborted: string[] = [];
    let calls = 0;
    provider.startContainer = (spec, ctx) => {
      calls++;
      return new Promise((_, reject) =>
        ctx.signal.addEventListener('abort', () => {
          aborted.push(spec.name);
          reject(providerError('Unavailable', 'aborted'));
        }),
      );
    };
    const p = pod('stuck', { spec: { terminationGracePeriodSeconds: 30 } });
    ctrl.upsert(p);
    await until(() => calls === 1);
    ctrl.upsert({ ...p, metadata: { ...p.metadata, deletionTimestamp: new Date() } });
    await until(() => sink.deleted.length === 1);
    expect(aborted).toEqual(['main']);
    expect(calls).toBe(1);
    expect(events.lines().filter((l) => l.startsWith('Failed'))).toEqual([]);
    expect(sink.of('default/stuck').map((x) => waitingReason(x))).not.toContain('CreateContainerError');
  });

  it('uses terminationGracePeriodSeconds when the deletion has no grace period', async () => {
    const { provider, sink, ctrl } = setupController();
    const p = pod('grace', { spec: { terminationGracePeriodSeconds: 3 } });
    ctrl.upsert(p);
    await until(() => provider.started.length === 1);
    ctrl.upsert({ ...p, metadata: { ...p.metadata, deletionTimestamp: new Date() } });
    await until(() => sink.deleted.length === 1);
    expect(provider.started[0]!.stoppedWith).toBe(3000);
  });

  it('a pod removed from the source is stopped at once and torn down', async () => {
    const { provider, setup, ctrl } = setupController();
    ctrl.upsert(pod('gone'));
    await until(() => provider.started.length === 1);
    ctrl.remove('default/gone');
    await until(() => setup.teardowns.length === 1);
    expect(provider.started[0]!.stoppedWith).toBe(0);
    expect(ctrl.pods()).toEqual([]);
  });

  it('rejects a pod admission refuses: phase Failed, upstream reason, "Pod was rejected: ..." and an event', async () => {
    const { provider, sink, events, ctrl } = setupController();
    ctrl.upsert(pod('elsewhere', { spec: { nodeSelector: { zone: 'z2' } } }));
    await until(() => sink.last('default/elsewhere'));
    const msg = "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector";
    expect(sink.last('default/elsewhere')).toMatchObject({ phase: 'Failed', reason: 'NodeAffinity', message: `Pod was rejected: ${msg}` });
    expect(events.list).toEqual([expect.objectContaining({ type: 'Warning', reason: 'NodeAffinity', note: msg })]);
    expect(provider.pulls).toEqual([]);
    expect(ctrl.activePods()).toEqual([]);
  });

  it("rejects with the router's reason when no provider fits", async () => {
    const { sink, ctrl } = setupController({ route: () => ({ reason: 'UnsupportedRuntimeClass', message: 'no provider serves runtime class "gpu"' }) });
    ctrl.upsert(pod('norc'));
    await until(() => sink.last('default/norc'));
    expect(sink.last('default/norc')).toMatchObject({
      phase: 'Failed',
      reason: 'UnsupportedRuntimeClass',
      message: 'Pod was rejected: no provider serves runtime class "gpu"',
    });
  });

  it('counts admitted pods against maxPods', async () => {
    const { sink, ctrl } = setupController({
      admitNode: { nodeName: 'node-a', nodeLabels: {}, allocatable: [fixedAllocatable({ cpu: '4', memory: '4Gi', pods: '1' })] },
    });
    ctrl.upsert(pod('first'));
    await until(() => sink.last('default/first')?.phase === 'Running');
    ctrl.upsert(pod('second'));
    await until(() => sink.last('default/second'));
    expect(sink.last('default/second')).toMatchObject({ phase: 'Failed', reason: 'OutOfpods' });
  });

  it('does not count finished pods against maxPods (upstream GetActivePods)', async () => {
    const { provider, sink, ctrl } = setupController({
      admitNode: { nodeName: 'node-a', nodeLabels: {}, allocatable: [fixedAllocatable({ cpu: '4', memory: '4Gi', pods: '1' })] },
    });
    provider.autoExit.main = 0;
    ctrl.upsert(pod('job', { restartPolicy: 'Never' }));
    await until(() => sink.last('default/job')?.phase === 'Succeeded');
    expect(ctrl.activePods()).toEqual([]);
    delete provider.autoExit.main;
    ctrl.upsert(pod('next'));
    await until(() => sink.last('default/next'));
    await until(() => sink.last('default/next')?.phase === 'Running');
  });

  it('does not patch the status again when nothing changed', async () => {
    const { provider, sink, ctrl } = setupController({ concurrency: 1 });
    ctrl.upsert(pod('steady'));
    await until(() => sink.last('default/steady')?.phase === 'Running');
    const before = sink.of('default/steady').length;
    // The informer hands back the pod with the status nodelet posted.
    for (let i = 0; i < 3; i++) ctrl.upsert({ ...pod('steady'), status: sink.last('default/steady') });
    ctrl.upsert(pod('marker'));
    await until(() => sink.last('default/marker')?.phase === 'Running');
    expect(sink.of('default/steady')).toHaveLength(before);
    expect(provider.started.filter((c) => c.spec.name === 'main')).toHaveLength(2);
  });

  it('runs init containers one at a time, in order, before the app containers', async () => {
    const { provider, sink, ctrl } = setupController();
    provider.autoExit = { i1: 0, i2: 0 };
    ctrl.upsert(pod('init', { init: ['i1', 'i2'], containers: ['a', 'b'] }));
    await until(() => sink.last('default/init')?.phase === 'Running' && provider.started.length === 4);
    expect(provider.names().slice(0, 2)).toEqual(['i1', 'i2']);
    expect(provider.names().slice(2).sort()).toEqual(['a', 'b']);
    expect(provider.runningAtStart.slice(0, 3)).toEqual([[], [], []]);
    const s = sink.last('default/init')!;
    expect(s.initContainerStatuses!.map((c) => c.state?.terminated?.reason)).toEqual(['Completed', 'Completed']);
    expect(s.conditions!.find((c) => c.type === 'Initialized')!.status).toBe('True');
  });

  it('fails the pod when an init container fails under restartPolicy Never, without starting app containers', async () => {
    const { provider, sink, ctrl } = setupController();
    provider.autoExit = { i1: 2 };
    ctrl.upsert(pod('badinit', { restartPolicy: 'Never', init: ['i1'] }));
    await until(() => sink.last('default/badinit')?.phase === 'Failed');
    expect(provider.names()).toEqual(['i1']);
  });

  it('reports CreateContainerError for a branded provider error and RunContainerError otherwise, and keeps running other pods', async () => {
    const { provider, sink, events, logs, ctrl } = setupController();
    provider.startError = (spec) =>
      spec.pod.name === 'branded'
        ? providerError('InvalidImage', 'not a WebAssembly module')
        : spec.pod.name === 'plain'
          ? new Error('worker exploded')
          : undefined;
    ctrl.upsert(pod('branded'));
    ctrl.upsert(pod('plain'));
    await until(
      () => waitingReason(sink.last('default/branded')) === 'CreateContainerError' && waitingReason(sink.last('default/plain')) === 'RunContainerError',
    );
    expect(sink.last('default/branded')!.containerStatuses![0]!.state!.waiting!.message).toBe('not a WebAssembly module');
    expect(events.lines()).toContain('Failed: Error: not a WebAssembly module');
    ctrl.upsert(pod('fine'));
    await until(() => sink.last('default/fine')?.phase === 'Running');
    expect(logs.filter((l) => l.includes('pod sync failed'))).toEqual([]);
  });

  it('reports FailedMount events per volume and starts nothing while volumes fail', async () => {
    const { provider, setup, events, ctrl } = setupController();
    setup.prepare = async () => {
      throw Object.assign(new Error('2 volumes failed'), {
        messages: ['MountVolume.SetUp failed for volume "a" : x', 'MountVolume.SetUp failed for volume "b" : y'],
      });
    };
    ctrl.upsert(pod('mount'));
    await until(() => events.list.length >= 2);
    expect(events.list.map((e) => [e.type, e.reason, e.note])).toEqual([
      ['Warning', 'FailedMount', 'MountVolume.SetUp failed for volume "a" : x'],
      ['Warning', 'FailedMount', 'MountVolume.SetUp failed for volume "b" : y'],
    ]);
    // The new pod's pull ran alongside its first volume set-up (image-prefetch.ts); its result was dropped unseen.
    expect(provider.pulls).toEqual(['registry.test/main:v1']);
    // A later sync whose volumes still fail pulls nothing more and starts nothing.
    ctrl.resyncPods(['uid-mount']);
    await until(() => events.list.length >= 4);
    expect(events.lines().slice(2)).toEqual([
      'FailedMount: MountVolume.SetUp failed for volume "a" : x',
      'FailedMount: MountVolume.SetUp failed for volume "b" : y',
    ]);
    expect(provider.pulls).toEqual(['registry.test/main:v1']);
    expect(provider.started).toEqual([]);
  });

  it("pulls a new pod's image while its volumes are set up; Pulling, Pulled and the start still follow the volumes", async () => {
    const { provider, setup, sink, events, ctrl } = setupController();
    const gate = holdVolumes(setup);
    ctrl.upsert(pod('early'));
    await until(() => gate.open && provider.pulls.length === 1);
    expect(provider.pulls).toEqual(['registry.test/main:v1']);
    expect(events.lines()).toEqual([]);
    expect(provider.started).toEqual([]);
    gate.open!();
    await until(() => sink.last('default/early')?.phase === 'Running');
    expect(events.lines()).toEqual([
      'Pulling: Pulling image "registry.test/main:v1"',
      expect.stringMatching(/^Pulled: Successfully pulled image "registry.test\/main:v1" in \d+\.\d{3}s\. Image size: 42 bytes\.$/),
      'Created: Created container: main',
      'Started: Started container main',
    ]);
    expect(provider.pulls).toHaveLength(1);
    expect(provider.started[0]!.spec.image).toMatchObject({ image: 'registry.test/main:v1', size: 42 });
  });

  it('a pull made alongside the volumes that fails shows ErrImagePull once the volumes are ready, and its back-off as before', async () => {
    const { provider, setup, sink, events, ctrl } = setupController();
    provider.pullError = (image) => providerError('ImagePull', `failed to pull image "${image}": manifest unknown`, { reason: 'ErrImagePull' });
    const gate = holdVolumes(setup);
    ctrl.upsert(pod('earlyfail'));
    await until(() => gate.open && provider.pulls.length === 1);
    // Failed already, but nothing shows before the volumes are ready.
    await new Promise((r) => setTimeout(r, 20)); // a fixed wait: nothing may show meanwhile
    expect(events.lines()).toEqual([]);
    expect(sink.of('default/earlyfail')).toEqual([]);
    gate.open!();
    await until(() => waitingReason(sink.last('default/earlyfail')) === 'ImagePullBackOff');
    expect(sink.of('default/earlyfail')[0]!.containerStatuses![0]!.state!.waiting).toEqual({
      reason: 'ErrImagePull',
      message: 'failed to pull image "registry.test/main:v1": manifest unknown',
    });
    expect(events.lines()).toEqual(PULL_FAILED_EVENTS);
    expect(provider.pulls).toHaveLength(1);
    expect(provider.started).toEqual([]);
  });

  it('reports CreateContainerConfigError when the environment cannot be resolved', async () => {
    const { provider, setup, sink, ctrl } = setupController();
    setup.env = async () => {
      throw new Error('configmap "cfg" not found');
    };
    ctrl.upsert(pod('cfg'));
    await until(() => waitingReason(sink.last('default/cfg')) === 'CreateContainerConfigError');
    expect(sink.last('default/cfg')!.containerStatuses![0]!.state!.waiting!.message).toBe('configmap "cfg" not found');
    expect(provider.started).toEqual([]);
  });

  it("waits with an image volume's pull reason in the containers mounting it, and runs the others", async () => {
    const { provider, setup, sink, ctrl, events } = setupController();
    const p = pod('imgvol', { containers: ['uses', 'other'] });
    p.spec!.containers[0]!.volumeMounts = [{ name: 'data', mountPath: '/data' }];
    setup.mounts = async (_pod, c) => {
      if (c.volumeMounts?.length) throw providerError('ImagePull', 'failed to pull image "reg.io/data:v1": manifest unknown', { reason: 'ErrImagePull' });
      return [];
    };
    ctrl.upsert(p);
    await until(() => waitingReason(sink.last('default/imgvol')) === 'ErrImagePull');
    const uses = sink.last('default/imgvol')!.containerStatuses!.find((c) => c.name === 'uses')!;
    expect(uses.state!.waiting).toEqual({ reason: 'ErrImagePull', message: 'failed to pull image "reg.io/data:v1": manifest unknown' });
    await until(() => provider.started.some((c) => c.spec.name === 'other'));
    expect(provider.started.map((c) => c.spec.name)).toEqual(['other']);
    // As upstream's: the container's event says the reason.
    expect(events.list.find((e) => e.regarding.fieldPath === 'spec.containers{uses}' && e.reason === 'Failed')?.note).toBe('Error: ErrImagePull');
  });

  it('defaults imagePullPolicy like upstream: Always for :latest or no tag, IfNotPresent otherwise', async () => {
    const { provider, ctrl } = setupController();
    const p = pod('policy', { containers: ['a', 'b', 'c', 'd'] });
    const images = ['reg.io:5000/app', 'reg.io/app:latest', 'reg.io/app:v1', 'reg.io/app@sha256:' + '0'.repeat(64)];
    p.spec!.containers.forEach((c, i) => {
      c.image = images[i];
    });
    ctrl.upsert(p);
    await until(() => provider.pulls.length === 4);
    const byImage = Object.fromEntries(provider.pulls.map((img, i) => [img, provider.pullPolicies[i]]));
    expect(byImage).toEqual({ [images[0]!]: 'Always', [images[1]!]: 'Always', [images[2]!]: 'IfNotPresent', [images[3]!]: 'IfNotPresent' });
  });

  it('retries a failed status patch', async () => {
    const { sink, ctrl } = setupController();
    sink.failPatches = 1;
    ctrl.upsert(pod('retry'));
    await until(() => sink.last('default/retry')?.phase === 'Running');
    expect(sink.failPatches).toBe(0);
  });

  it('backs off a status patch that keeps failing: 1 s, then 2 s, ... (at most 10 s), and posts the newest status once it works', async () => {
    const { sink, ctrl, logs } = setupController();
    sink.failPatches = 2;
    ctrl.upsert(pod('retry-backoff'));
    const retries = () => logs.filter((l) => l.includes('failed to update pod status, will retry')).map((l) => JSON.parse(l.slice(l.indexOf('{'))).retryInMs);
    await until(() => retries().length === 2);
    expect(retries()).toEqual([1000, 2000]);
    await vi.waitFor(() => expect(sink.last('default/retry-backoff')?.phase).toBe('Running'), { timeout: 5000, interval: 20 });
    expect(sink.failPatches).toBe(0);
  });

  it("posts a pod's status again when the server's copy shows other kubelet-owned conditions (Ready=False from the node-lifecycle controller)", async () => {
    const { sink, ctrl, logs } = setupController({ statusReconcileMs: 50 });
    ctrl.start();
    const p = pod('flip');
    ctrl.upsert(p);
    await until(() => sink.last('default/flip')?.phase === 'Running');
    const ready = (s?: V1Pod['status']) => s?.conditions?.find((c) => c.type === 'Ready')?.status;
    const posted = sink.last('default/flip')!;
    expect(ready(posted)).toBe('True');
    // The server's copy as the informer hands it over: as posted, then with Ready=False set by another writer.
    ctrl.upsert({ ...p, status: posted });
    await new Promise((r) => setTimeout(r, 200));
    const before = sink.patches.length;
    expect(logs.some((l) => l.includes('differ from those posted'))).toBe(false);
    const marked = posted.conditions!.map((c) => (c.type === 'Ready' ? { ...c, status: 'False', lastTransitionTime: new Date() } : c));
    ctrl.upsert({ ...p, status: { ...posted, conditions: marked } });
    await until(() => sink.patches.length > before);
    expect(ready(sink.last('default/flip'))).toBe('True');
    expect(logs.some((l) => l.includes('differ from those posted'))).toBe(true);
    // Once the server's copy shows it again, nothing more is posted.
    ctrl.upsert({ ...p, status: sink.last('default/flip') });
    const after = sink.patches.length;
    await new Promise((r) => setTimeout(r, 200));
    expect(sink.patches.length).toBe(after);
  });

  it('shutdown stops running containers with their grace period and keeps pod objects', async () => {
    const { provider, sink, ctrl } = setupController();
    ctrl.upsert(pod('sd', { spec: { terminationGracePeriodSeconds: 2 } }));
    await until(() => provider.started.length === 1);
    await ctrl.shutdown();
    expect(provider.started[0]!.stoppedWith).toBe(2000);
    expect(sink.deleted).toEqual([]);
    ctrl.upsert(pod('late'));
    expect(ctrl.pods().map((p) => p.metadata!.name)).toEqual(['sd']);
  });

  it('terminateAbnormally stops the pod through the normal stop path within the grace given, fails it for good, and no restart follows', async () => {
    const { provider, sink, ctrl } = setupController();
    const p = pod('down', { restartPolicy: 'Always' });
    ctrl.upsert(p);
    await until(() => sink.last('default/down')?.phase === 'Running');
    const message = 'Pod was terminated in response to imminent node shutdown.';
    await ctrl.terminateAbnormally(p, {
      graceMs: 7000,
      reason: 'Terminated',
      message,
      conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message }],
    });
    expect(provider.started).toHaveLength(1);
    expect(provider.started[0]!.stoppedWith).toBe(7000);
    const s = sink.last('default/down')!;
    expect(s).toMatchObject({ phase: 'Failed', reason: 'Terminated', message });
    expect(s.conditions).toContainEqual(expect.objectContaining({ type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message }));
    expect(s.containerStatuses![0]!.state?.terminated).toBeDefined();
    expect(ctrl.activePods()).toEqual([]);
    // A later sync (resync, status echo from the API) neither restarts it nor un-fails it.
    ctrl.upsert({ ...p, metadata: { ...p.metadata, resourceVersion: '2' }, status: s });
    await new Promise((r) => setTimeout(r, 50)); // a fixed wait: the sync must neither restart nor un-fail it
    expect(provider.started).toHaveLength(1);
    expect(sink.last('default/down')!.phase).toBe('Failed');
    // A second call is a no-op.
    const n = sink.patches.length;
    await ctrl.terminateAbnormally(p, { graceMs: 0, reason: 'Other', message: 'other' });
    expect(sink.patches.length).toBe(n);
  });

  it("releases a finished pod's resources (DRA claims) once, after its containers stopped and before its terminal status is posted", async () => {
    const { provider, setup, sink, ctrl } = setupController();
    setup.releaseResources = async (p: V1Pod) => void sink.ops.push(`release ${p.metadata!.uid}`);
    provider.autoExit.main = 0;
    const p = pod('job', { restartPolicy: 'Never' });
    ctrl.upsert(p);
    await until(() => sink.last('default/job')?.phase === 'Succeeded');
    expect(sink.ops.filter((o) => o !== 'patch Pending' && o !== 'patch Running')).toEqual(['release uid-job', 'patch Succeeded']);
    // A later sync does not release again; the deletion's teardown is the preparers' (idempotent) business.
    ctrl.upsert({ ...p, metadata: { ...p.metadata, resourceVersion: '2' }, status: sink.last('default/job') });
    await new Promise((r) => setTimeout(r, 50)); // a fixed wait: the sync must not release again
    expect(sink.ops.filter((o) => o.startsWith('release'))).toEqual(['release uid-job']);
  });

  it('releases the resources of a pod running forever only when it is terminated abnormally, before its Failed status', async () => {
    const { setup, sink, ctrl } = setupController();
    setup.releaseResources = async (p: V1Pod) => void sink.ops.push(`release ${p.metadata!.uid}`);
    const p = pod('svc', { restartPolicy: 'Always' });
    ctrl.upsert(p);
    await until(() => sink.last('default/svc')?.phase === 'Running');
    expect(sink.ops.some((o) => o.startsWith('release'))).toBe(false);
    await ctrl.terminateAbnormally(p, { graceMs: 0, reason: 'Evicted', message: 'evicted' });
    expect(sink.ops.slice(-2)).toEqual(['release uid-svc', 'patch Failed']);
  });
});

describe('PodController pod IPs', () => {
  /** A fake pod network: IPs from a list, recording releases; `full` makes setUp fail like an exhausted CIDR. */
  function fakeNetwork() {
    const n = {
      free: ['10.244.0.2', '10.244.0.3'],
      held: new Map<string, string>(),
      released: [] as string[],
      full: false,
      async setUp(p: V1Pod) {
        const uid = p.metadata!.uid!;
        if (n.full) throw new Error('no free IP in the pod CIDR: all 253 pod addresses of 10.244.0.0/24 are in use');
        if (!n.held.has(uid)) n.held.set(uid, n.free.shift()!);
        return [n.held.get(uid)!];
      },
      async release(p: V1Pod) {
        const uid = p.metadata!.uid!;
        if (!n.held.has(uid)) return;
        n.free.unshift(n.held.get(uid)!);
        n.held.delete(uid);
        n.released.push(uid);
      },
    };
    return n;
  }

  it('sets the IP before containers start (ContainerSpec.network, env source) and reports status.podIP/podIPs', async () => {
    const network = fakeNetwork();
    const { provider, setup, sink, ctrl } = setupController({ network });
    const envPods: (string | undefined)[] = [];
    setup.env = async (p) => {
      envPods.push(p.status?.podIP);
      return {};
    };
    ctrl.upsert(pod('ip'));
    await until(() => sink.last('default/ip')?.phase === 'Running');
    expect(provider.started[0]!.spec.network).toEqual({ podIPs: ['10.244.0.2'], hostNetwork: false });
    expect(envPods).toEqual(['10.244.0.2']);
    expect(sink.last('default/ip')).toMatchObject({ podIP: '10.244.0.2', podIPs: [{ ip: '10.244.0.2' }], hostIP: '10.0.0.9' });
  });

  it("sets a new pod's volumes up while its IPs are, unless a downward API volume shows the IPs", async () => {
    const network = fakeNetwork();
    const order: string[] = [];
    const gate: { open?: () => void } = {};
    const setUp = network.setUp.bind(network);
    network.setUp = async (p: V1Pod) => {
      order.push(`ip ${p.metadata!.name} asked`);
      await new Promise<void>((r) => (gate.open = r));
      order.push(`ip ${p.metadata!.name} given`);
      return setUp(p);
    };
    const { setup, sink, ctrl } = setupController({ network });
    setup.prepare = async (p: V1Pod) => {
      order.push(`volumes ${p.metadata!.name} (podIP ${p.status?.podIP ?? 'none'})`);
      return new Map();
    };
    ctrl.upsert(pod('plain', { spec: { volumes: [{ name: 'token', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }] } }));
    await until(() => gate.open);
    await until(() => order.length === 2);
    expect([...order].sort()).toEqual(['ip plain asked', 'volumes plain (podIP none)']); // both before the IP was given
    gate.open!();
    await until(() => sink.last('default/plain')?.phase === 'Running');
    gate.open = undefined;
    const showsIP = { name: 'info', projected: { sources: [{ downwardAPI: { items: [{ path: 'ip', fieldRef: { fieldPath: 'status.podIP' } }] } }] } };
    ctrl.upsert(pod('shows', { spec: { volumes: [showsIP] } }));
    await until(() => gate.open);
    expect(order.slice(3)).toEqual(['ip shows asked']);
    gate.open!();
    await until(() => sink.last('default/shows')?.phase === 'Running');
    expect(order.slice(3)).toEqual(['ip shows asked', 'ip shows given', 'volumes shows (podIP 10.244.0.3)']);
  });

  it('a hostNetwork pod gets the host IP and takes none from the pod network', async () => {
    const network = fakeNetwork();
    const { provider, sink, ctrl } = setupController({ network });
    ctrl.upsert(pod('host', { spec: { hostNetwork: true } }));
    await until(() => sink.last('default/host')?.phase === 'Running');
    expect(sink.last('default/host')).toMatchObject({ podIP: '10.0.0.9', podIPs: [{ ip: '10.0.0.9' }] });
    expect(provider.started[0]!.spec.network).toEqual({ podIPs: ['10.0.0.9'], hostNetwork: true });
    expect(network.held.size).toBe(0);
  });

  it('releases the IP when the pod is deleted, and when it finished', async () => {
    const network = fakeNetwork();
    const { provider, sink, ctrl } = setupController({ network });
    provider.autoExit.done = 0;
    const p = pod('del');
    ctrl.upsert(p);
    await until(() => sink.last('default/del')?.phase === 'Running');
    ctrl.upsert({ ...p, metadata: { ...p.metadata, deletionTimestamp: new Date() } });
    await until(() => sink.deleted.length === 1);
    expect(network.released).toEqual(['uid-del']);
    ctrl.upsert(pod('job', { restartPolicy: 'Never', containers: ['done'] }));
    await until(() => network.released.length === 2);
    expect(network.released).toEqual(['uid-del', 'uid-job']);
    expect(sink.last('default/job')).toMatchObject({ phase: 'Succeeded', podIP: '10.244.0.2' });
  });

  it('no IP to give: the pod stays Pending/ContainerCreating with a FailedCreatePodSandBox event, and nothing starts', async () => {
    const network = fakeNetwork();
    network.full = true;
    const { provider, sink, events, ctrl } = setupController({ network });
    ctrl.upsert(pod('full'));
    await until(() => events.list.some((e) => e.reason === 'FailedCreatePodSandBox'));
    expect(events.list.find((e) => e.reason === 'FailedCreatePodSandBox')).toMatchObject({
      type: 'Warning',
      note: 'Failed to create pod sandbox: no free IP in the pod CIDR: all 253 pod addresses of 10.244.0.0/24 are in use',
    });
    await until(() => sink.last('default/full'));
    expect(sink.last('default/full')).toMatchObject({ phase: 'Pending' });
    expect(waitingReason(sink.last('default/full'))).toBe('ContainerCreating');
    expect(sink.last('default/full')!.podIP).toBeUndefined();
    expect(provider.started).toEqual([]);
  });
});

/** The one PodWorker: a fake PodProvider alone and behind the pod controller, and both provider kinds through the same worker. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import {
  API_VERSION,
  providerError,
  type PodLifecycleContext,
  type PodObject,
  type PodProvider,
  type PodRef,
  type PodStatusReport,
} from '../../../plugin-api/v1/index.ts';
import { createBackoff, podLifecycleFromMachine, podStates, type PodMachineContext } from '../../../plugin-api/v1/toolkit.ts';
import { Backoff } from '../../../core/backoff/index.ts';
import { PodController } from '../../../core/pods/pod-controller.ts';
import { predicateAdmitHandler } from '../../../core/pods/admission.ts';
import { fixedAllocatable } from '../../../core/pods/admit-handler.ts';
import { PodWorker } from '../../../core/pods/pod-worker.ts';
import { FakeEvents, FakeSink, fakeSetup, memoryLogger } from './fakes.ts';

/** A pod provider whose answers the test sets. */
class FakePodProvider implements PodProvider {
  readonly name = 'vm';
  readonly apiVersion = API_VERSION;
  readonly handlers = ['vm'];
  readonly architecture = 'amd64';
  readonly os = 'linux';
  readonly runtimeVersion = 'vm://1';
  readonly calls: string[] = [];
  createError?: () => unknown;
  deleteError?: () => unknown;
  updateError?: () => unknown;
  deleteHangs = false;
  report?: PodStatusReport | (() => unknown);
  ctx?: PodLifecycleContext;
  objects: PodObject[] = [];
  readonly pods = {
    createPod: async (pod: PodObject, ctx: PodLifecycleContext) => {
      this.calls.push(`create ${pod.metadata.name}`);
      this.objects.push(pod);
      this.ctx = ctx;
      const e = this.createError?.();
      if (e) throw e;
    },
    updatePod: async (pod: PodObject) => {
      this.calls.push(`update ${JSON.stringify(pod.metadata.labels)}`);
      const e = this.updateError?.();
      if (e) throw e;
    },
    deletePod: async (pod: PodObject, ctx: PodLifecycleContext, graceMs: number) => {
      this.calls.push(`delete ${pod.metadata.name} ${graceMs} aborted=${ctx.signal.aborted}`);
      // A hanging delete: it outlives its abort by far more than any test waits (not a wait of the test).
      if (this.deleteHangs) await new Promise<void>((r) => ctx.signal.addEventListener('abort', () => setTimeout(r, 10_000).unref()));
      const e = this.deleteError?.();
      if (e) throw e;
    },
    getPodStatus: (_ref: PodRef) => (typeof this.report === 'function' ? this.report() : this.report) as PodStatusReport | undefined,
  };
}

function pod(name = 'p', o: { restartPolicy?: string; init?: string[]; labels?: Record<string, string> } = {}): V1Pod {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}`, labels: o.labels },
    spec: {
      restartPolicy: o.restartPolicy ?? 'Never',
      containers: [{ name: 'main', image: 'http://127.0.0.1/x', args: ['a'], resources: { limits: { memory: '64Mi', cpu: '250m' } } }],
      initContainers: o.init?.map((n) => ({ name: n, image: `http://127.0.0.1/${n}` })),
    },
  };
}

function harness(o: { backoff?: Backoff; setup?: ReturnType<typeof fakeSetup> } = {}) {
  const provider = new FakePodProvider();
  const setup = o.setup ?? fakeSetup();
  const events: string[] = [];
  const requeues: number[] = [];
  const logs: string[] = [];
  const worker = new PodWorker(pod(), {
    provider,
    setup,
    hostIP: '10.0.0.9',
    backoff: { restart: o.backoff ?? new Backoff(60_000, 120_000), pull: new Backoff(60_000, 120_000), volume: new Backoff(60_000, 120_000) },
    requeue: (ms) => requeues.push(ms),
    context: (_p, signal) => ({ log: memoryLogger(logs), event: () => undefined, signal, podDir: '/nonexistent/pods/uid-p' }),
    event: (_type, reason, note, fieldPath) => events.push(`${reason}: ${note}${fieldPath ? ` @${fieldPath}` : ''}`),
    killSlackMs: 20,
  });
  return { provider, setup, events, requeues, logs, worker };
}

const running = (name: string, restartCount = 0, ready = true) => ({
  name,
  state: { running: { startedAt: new Date('2026-01-01T00:00:00Z') } },
  ready,
  restartCount,
  containerID: `vm://${name}-${restartCount}`,
});
const exited = (name: string, exitCode: number, restartCount = 0) => ({
  name,
  ready: false,
  restartCount,
  containerID: `vm://${name}-${restartCount}`,
  state: {
    terminated: {
      exitCode,
      reason: exitCode ? 'Error' : 'Completed',
      startedAt: new Date('2026-01-01T00:00:00Z'),
      finishedAt: new Date('2026-01-01T00:00:05Z'),
    },
  },
});

describe('PodWorker with a PodProvider', () => {
  it('prepares volumes, then creates the pod once with a context that resolves containers, log paths and status changes', async () => {
    const { provider, setup, worker, requeues } = harness();
    expect(worker.status(pod()).containerStatuses![0]!.state).toEqual({ waiting: { reason: 'ContainerCreating' } });
    await worker.reconcile(pod());
    await worker.reconcile(pod());
    // Volumes are set up once; the re-sync cadence (pod-volumes.test.ts) is the same for both provider kinds.
    expect(setup.prepares).toBe(1);
    expect(provider.calls).toEqual(['create p']);
    expect(provider.objects[0]).toMatchObject({
      metadata: { namespace: 'default', name: 'p', uid: 'uid-p' },
      spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'http://127.0.0.1/x', args: ['a'] }] },
    });
    const ctx = provider.ctx!;
    expect(ctx.podDir).toBe('/nonexistent/pods/uid-p');
    await expect(ctx.resolveContainer('main')).resolves.toEqual({
      name: 'main',
      image: 'http://127.0.0.1/x',
      argv: ['main'],
      env: { A: '1' },
      mounts: [],
      limits: { memoryBytes: 64 * 1024 * 1024, cpuMillis: 250 },
      workingDir: undefined,
    });
    await expect(ctx.resolveContainer('nope')).rejects.toMatchObject({ code: 'NotFound' });
    expect(ctx.logPath('main', 2)).toBe('/nonexistent/main/2.log');
    expect(() => ctx.logPath('other', 0)).toThrow(/has no container "other"/);
    expect(() => ctx.logPath('main', -1)).toThrow(/non-negative integer/);
    ctx.statusChanged();
    expect(requeues).toEqual([0]);
    // A status-only sync does not touch the volumes again.
    await worker.reconcile(pod());
    expect(setup.prepares).toBe(1);
  });

  it('maps the report to a core/v1 status: phase, container states, readiness conditions, lastState across restarts', async () => {
    const { provider, worker } = harness();
    await worker.reconcile(pod('p', { init: ['setup'] }));
    provider.report = { phase: 'Pending', initContainers: [running('setup', 0, false)] };
    let s = worker.status(pod('p', { init: ['setup'] }));
    expect(s).toMatchObject({ phase: 'Pending', reason: null, hostIP: '10.0.0.9', hostIPs: [{ ip: '10.0.0.9' }] });
    expect(s.initContainerStatuses![0]).toMatchObject({ name: 'setup', started: true, ready: false, state: { running: {} }, containerID: 'vm://setup-0' });
    expect(s.containerStatuses![0]!.state).toEqual({ waiting: { reason: 'ContainerCreating' } });
    expect(s.conditions!.find((c) => c.type === 'Initialized')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotInitialized',
      message: 'containers with incomplete status: [setup]',
    });
    expect(s.conditions!.find((c) => c.type === 'PodReadyToStartContainers')).toMatchObject({ status: 'True' });

    provider.report = { phase: 'Running', initContainers: [exited('setup', 0)], containers: [running('main')] };
    s = worker.status(pod('p', { init: ['setup'] }));
    expect(s.phase).toBe('Running');
    expect(s.initContainerStatuses![0]).toMatchObject({
      ready: true,
      state: { terminated: { exitCode: 0, reason: 'Completed', containerID: 'vm://setup-0' } },
    });
    expect(
      s
        .conditions!.filter((c) => c.status === 'True')
        .map((c) => c.type)
        .sort(),
    ).toEqual(['ContainersReady', 'Initialized', 'PodReadyToStartContainers', 'Ready']);

    provider.report = {
      phase: 'Running',
      reason: 'CrashLoopBackOff',
      message: 'exited with code 3',
      initContainers: [exited('setup', 0)],
      containers: [exited('main', 3)],
    };
    s = worker.status(pod('p', { init: ['setup'] }));
    expect(s).toMatchObject({ reason: 'CrashLoopBackOff', message: 'exited with code 3' });
    expect(s.conditions!.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotReady',
      message: 'containers with unready status: [main]',
    });
    provider.report = { phase: 'Running', initContainers: [exited('setup', 0)], containers: [running('main', 1)] };
    s = worker.status(pod('p', { init: ['setup'] }));
    expect(s.containerStatuses![0]).toMatchObject({
      restartCount: 1,
      state: { running: {} },
      lastState: { terminated: { exitCode: 3, reason: 'Error', containerID: 'vm://main-0' } },
    });

    provider.report = { phase: 'Succeeded', initContainers: [exited('setup', 0)], containers: [exited('main', 0, 1)] };
    s = worker.status(pod('p', { init: ['setup'] }));
    expect(s.conditions!.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'PodCompleted' });
    expect(s.conditions!.find((c) => c.type === 'Initialized')).toMatchObject({ status: 'True', reason: 'PodCompleted' });
    expect(worker.finished(pod())).toBe(true);
    expect(worker.container('main')).toEqual({ restartCount: 1, running: false });
    expect(worker.container('setup')).toEqual({ restartCount: 0, running: false });
  });

  it('an app container is ready only while it runs, whatever the provider says', async () => {
    const { provider, worker } = harness();
    await worker.reconcile(pod());
    provider.report = { phase: 'Running', containers: [{ ...exited('main', 0), ready: true }] };
    expect(worker.status(pod()).containerStatuses![0]!.ready).toBe(false);
    expect(worker.container('nope')).toBeUndefined();
  });

  it('keeps the last good status when getPodStatus throws or lies, with one ProviderStatusInvalid event per problem', async () => {
    const { provider, worker, events, logs } = harness();
    await worker.reconcile(pod());
    provider.report = { phase: 'Running', containers: [running('main')] };
    expect(worker.status(pod()).phase).toBe('Running');
    provider.report = () => ({ phase: 'Sleeping' });
    expect(worker.status(pod()).phase).toBe('Running');
    expect(worker.status(pod()).phase).toBe('Running');
    provider.report = () => {
      throw new Error('vm agent unreachable');
    };
    expect(worker.status(pod()).containerStatuses![0]!.state).toHaveProperty('running');
    provider.report = () => ({ phase: 'Running', containers: [{ name: 'main', state: {} }] });
    worker.status(pod());
    expect(events).toEqual([
      'ProviderStatusInvalid: provider "vm": getPodStatus returned phase "Sleeping" (expected one of Pending, Running, Succeeded, Failed, Unknown)',
      'ProviderStatusInvalid: provider "vm": getPodStatus failed: vm agent unreachable',
      expect.stringMatching(/^ProviderStatusInvalid: provider "vm": getPodStatus returned an invalid container status \{"name":"main","state":\{\}\}/),
    ]);
    expect(logs.filter((l) => l.startsWith('warn'))).toHaveLength(3);
  });

  it('an asynchronous getPodStatus: the last good status meanwhile, one call in flight, a re-sync once an answer changes the status', async () => {
    const { provider, worker, requeues, events } = harness();
    await worker.reconcile(pod());
    let calls = 0;
    let answer!: (r: PodStatusReport) => void;
    provider.report = () => {
      calls++;
      return new Promise<PodStatusReport>((r) => (answer = r));
    };
    expect(worker.status(pod()).phase).toBe('Pending');
    expect(worker.status(pod()).phase).toBe('Pending');
    expect(calls).toBe(1);
    const before = requeues.length;
    answer({ phase: 'Running', containers: [running('main')] });
    await vi.waitFor(() => expect(requeues.length).toBe(before + 1));
    expect(requeues.at(-1)).toBe(0);
    provider.report = () => Promise.resolve({ phase: 'Running', containers: [running('main')] });
    expect(worker.status(pod()).phase).toBe('Running');
    await new Promise((r) => setImmediate(r)); // the same answer again: no further sync
    expect(requeues.length).toBe(before + 1);
    provider.report = () => Promise.reject(new Error('agent gone'));
    expect(worker.status(pod()).phase).toBe('Running');
    await vi.waitFor(() => expect(events).toContain('ProviderStatusInvalid: provider "vm": getPodStatus failed: agent gone'));
  });

  it('FailedMount: events per volume, back-off re-queue, and no createPod until the volumes are prepared', async () => {
    const setup = fakeSetup();
    setup.prepare = async () => {
      throw Object.assign(new Error('x'), { messages: ['MountVolume.SetUp failed for volume "cfg" : configmap "cfg" not found'] });
    };
    const { provider, worker, events, requeues } = harness({ setup });
    await worker.reconcile(pod());
    expect(provider.calls).toEqual([]);
    expect(events).toEqual(['FailedMount: MountVolume.SetUp failed for volume "cfg" : configmap "cfg" not found']);
    expect(requeues).toEqual([30_000]);
    const s = worker.status(pod());
    expect(s.phase).toBe('Pending');
    expect(s.conditions!.find((c) => c.type === 'PodReadyToStartContainers')).toMatchObject({ status: 'False' });
  });

  it("InvalidArgument/NotSupported from createPod fail the pod for good (UnsupportedPodSpec or the provider's own reason)", async () => {
    const { provider, worker, events } = harness();
    provider.createError = () => providerError('InvalidArgument', 'image "ftp://x" is not an http(s) URL');
    await worker.reconcile(pod());
    const s = worker.status(pod());
    expect(s).toMatchObject({
      phase: 'Failed',
      reason: 'UnsupportedPodSpec',
      message: 'provider "vm" cannot run this pod: image "ftp://x" is not an http(s) URL',
    });
    expect(s.containerStatuses![0]!.state!.waiting).toMatchObject({ reason: 'UnsupportedPodSpec' });
    expect(worker.finished(pod())).toBe(true);
    expect(events).toEqual(['UnsupportedPodSpec: provider "vm" cannot run this pod: image "ftp://x" is not an http(s) URL']);
    await worker.reconcile(pod());
    expect(provider.calls).toEqual(['create p']);

    const b = harness();
    b.provider.createError = () => providerError('NotSupported', 'GPUs are not offered', { reason: 'UnsupportedDevice' });
    await b.worker.reconcile(pod());
    expect(b.worker.status(pod())).toMatchObject({ phase: 'Failed', reason: 'UnsupportedDevice' });
  });

  it('ImagePull from createPod shows ErrImagePull, then ImagePullBackOff while the back-off lasts, then retries', async () => {
    const backoff = new Backoff(60_000, 120_000);
    const { provider, worker, events, requeues } = harness({ backoff });
    provider.createError = () => providerError('ImagePull', 'GET http://127.0.0.1:1/x: connection refused');
    await worker.reconcile(pod());
    expect(worker.status(pod()).containerStatuses![0]!.state!.waiting).toEqual({
      reason: 'ErrImagePull',
      message: 'GET http://127.0.0.1:1/x: connection refused',
    });
    expect(requeues).toEqual([0]);
    await worker.reconcile(pod());
    expect(provider.calls).toEqual(['create p']);
    expect(worker.status(pod()).containerStatuses![0]!.state!.waiting).toEqual({
      reason: 'ImagePullBackOff',
      message: 'Back-off pulling image: GET http://127.0.0.1:1/x: connection refused',
    });
    expect(requeues[1]).toBeGreaterThan(0);
    expect(events).toEqual([
      'Failed: Failed to pull image: GET http://127.0.0.1:1/x: connection refused',
      'Failed: Error: ErrImagePull',
      'BackOff: Back-off pulling image',
      'Failed: Error: ImagePullBackOff',
    ]);
    expect(worker.finished(pod())).toBe(false);
    backoff.reset('uid-p/create');
    provider.createError = undefined;
    await worker.reconcile(pod());
    expect(provider.calls).toEqual(['create p', 'create p']);
    provider.report = { phase: 'Running', containers: [running('main')] };
    expect(worker.status(pod()).containerStatuses![0]!.state).toHaveProperty('running');
  });

  it('other createPod errors are FailedCreatePodSandBox with back-off; an unbranded one is also logged as a provider bug', async () => {
    const { provider, worker, events, requeues, logs } = harness();
    provider.createError = () => new TypeError('cannot read properties of undefined');
    await worker.reconcile(pod());
    expect(events).toEqual(['FailedCreatePodSandBox: Failed to create pod sandbox: cannot read properties of undefined']);
    expect(requeues).toEqual([60_000]);
    expect(logs.some((l) => l.includes('unbranded error from createPod'))).toBe(true);
    const s = worker.status(pod());
    expect(s.phase).toBe('Pending');
    expect(s.containerStatuses![0]!.state).toEqual({ waiting: { reason: 'ContainerCreating' } });

    const b = harness();
    b.provider.createError = () => providerError('Unavailable', 'no capacity left', { reason: 'InsufficientCapacity' });
    await b.worker.reconcile(pod());
    expect(b.worker.status(pod()).containerStatuses![0]!.state).toEqual({ waiting: { reason: 'InsufficientCapacity', message: 'no capacity left' } });
    expect(b.logs.some((l) => l.includes('unbranded'))).toBe(false);
  });

  it('resolveContainer failures become branded CreateContainerConfigError with a Failed event on the container', async () => {
    const setup = fakeSetup();
    setup.env = async () => {
      throw new Error('configmap "cfg" not found');
    };
    const { provider, worker, events } = harness({ setup });
    await worker.reconcile(pod());
    const err = await provider.ctx!.resolveContainer('main').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'InvalidArgument', reason: 'CreateContainerConfigError', message: 'configmap "cfg" not found' });
    expect(events).toEqual(['Failed: Error: configmap "cfg" not found @spec.containers{main}']);
  });

  it("a mount's own reason (an image volume not pulled) wins over CreateContainerConfigError", async () => {
    const setup = fakeSetup();
    setup.mounts = async () => {
      throw providerError('ImagePull', 'failed to pull image "registry.test/data:v1": manifest unknown', { reason: 'ErrImagePull' });
    };
    const { provider, worker } = harness({ setup });
    await worker.reconcile(pod());
    const err = await provider.ctx!.resolveContainer('main').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'InvalidArgument', reason: 'ErrImagePull', message: 'failed to pull image "registry.test/data:v1": manifest unknown' });
  });

  it('calls updatePod only when a mutable field changed; NotSupported is accepted, other errors re-tried', async () => {
    const { provider, worker, events } = harness();
    await worker.reconcile(pod());
    await worker.reconcile(pod());
    provider.updateError = () => providerError('Unavailable', 'agent busy');
    await worker.reconcile(pod('p', { labels: { tier: 'a' } }));
    await worker.reconcile(pod('p', { labels: { tier: 'a' } }));
    provider.updateError = () => providerError('NotSupported', 'labels are fixed');
    await worker.reconcile(pod('p', { labels: { tier: 'a' } }));
    await worker.reconcile(pod('p', { labels: { tier: 'a' } }));
    expect(provider.calls).toEqual(['create p', 'update {"tier":"a"}', 'update {"tier":"a"}', 'update {"tier":"a"}']);
    expect(events.filter((e) => e.startsWith('FailedUpdate'))).toHaveLength(2);
  });

  it('terminate calls deletePod with the grace period before aborting the pod signal, with Killing events', async () => {
    const { provider, worker, events } = harness();
    await worker.reconcile(pod());
    provider.report = { phase: 'Running', containers: [running('main')] };
    worker.status(pod());
    const signal = provider.ctx!.signal;
    await worker.terminate(pod(), 30_000);
    expect(provider.calls).toEqual(['create p', 'delete p 30000 aborted=false']);
    expect(signal.aborted).toBe(true);
    expect(events).toEqual(['Killing: Stopping container main @spec.containers{main}']);
    // A terminated worker ignores further syncs and status changes.
    provider.ctx!.statusChanged();
    await worker.reconcile(pod());
    expect(provider.calls).toHaveLength(2);
    expect(worker.status(pod()).phase).toBe('Running');
  });

  it('uses the pod it knows when terminated with a stub pod, and does not call deletePod for a pod never handed over', async () => {
    const { provider, worker } = harness();
    await worker.reconcile(pod());
    await worker.terminate({ metadata: { uid: 'uid-p', name: 'p', namespace: 'default' }, spec: { containers: [] } }, 0);
    expect(provider.calls).toEqual(['create p', 'delete p 0 aborted=false']);
    expect(provider.objects).toHaveLength(1);
    const b = harness();
    await b.worker.terminate(pod(), 10);
    expect(b.provider.calls).toEqual([]);
  });

  it('a failing or hanging deletePod is a FailedKillPod event and never blocks termination; NotFound is fine', async () => {
    const a = harness();
    await a.worker.reconcile(pod());
    a.provider.deleteError = () => providerError('Internal', 'hypervisor gone');
    await a.worker.terminate(pod(), 5);
    expect(a.events).toEqual(['FailedKillPod: error killing pod: hypervisor gone']);

    const b = harness();
    await b.worker.reconcile(pod());
    b.provider.deleteError = () => providerError('NotFound', 'no such pod');
    await b.worker.terminate(pod(), 5);
    expect(b.events).toEqual([]);

    const c = harness();
    await c.worker.reconcile(pod());
    c.provider.deleteHangs = true;
    await c.worker.terminate(pod(), 5);
    expect(c.provider.ctx!.signal.aborted).toBe(true);
    expect(c.events).toEqual(['FailedKillPod: error killing pod: provider "vm" did not delete the pod within 25ms']);
  });
});

describe('PodController with a PodProvider', () => {
  const controllers: PodController[] = [];
  afterEach(async () => {
    await Promise.all(controllers.splice(0).map((c) => c.shutdown()));
  });

  function controller(route: ConstructorParameters<typeof PodController>[0]['route']) {
    const sink = new FakeSink();
    const events = new FakeEvents();
    const setup = fakeSetup();
    const ctrl = new PodController({
      nodeName: 'node-a',
      hostIP: '10.0.0.9',
      log: memoryLogger(),
      route,
      setup,
      sink,
      events,
      admitNode: { nodeName: 'node-a', nodeLabels: {}, allocatable: [fixedAllocatable({ cpu: '4', memory: '4Gi', pods: '110' })] },
      admitHandlers: [predicateAdmitHandler],
      resyncMs: 3_600_000,
      backoff: { initialMs: 10, maxMs: 20 },
    });
    controllers.push(ctrl);
    return { ctrl, sink, events, setup };
  }
  const until = (fn: () => unknown) =>
    vi.waitFor(
      () => {
        if (!fn()) throw new Error('not yet');
      },
      { timeout: 5000, interval: 5 },
    );

  it('runs a state-machine pod provider to Succeeded, serves its logs view, and deletes it with the grace period', async () => {
    let finish!: () => void;
    const done = new Promise<void>((r) => {
      finish = r;
    });
    const deleted: number[] = [];
    const lifecycle = podLifecycleFromMachine<PodMachineContext>((p, ctx) => {
      const states = podStates<PodMachineContext>();
      return {
        initial: states.Registered(),
        onAbort: () => states.Terminated(),
        context: {
          restartPolicy: p.spec.restartPolicy ?? 'Always',
          pullImages: async () => undefined,
          start: async () => {
            ctx.logPath('main', 0);
          },
          wait: async () => {
            await done;
            return { exitCode: 0 };
          },
          stop: async () => undefined,
          ...createBackoff(),
        },
      };
    });
    const provider: PodProvider = {
      name: 'machine',
      apiVersion: API_VERSION,
      handlers: ['machine'],
      architecture: 'a',
      os: 'o',
      runtimeVersion: 'machine://1',
      pods: {
        ...lifecycle,
        getPodStatus: (ref) => {
          const s = lifecycle.getPodStatus(ref);
          return s && { ...s, containers: s.phase === 'Running' ? [running('main')] : s.phase === 'Succeeded' ? [exited('main', 0)] : [] };
        },
        deletePod: (p, ctx, grace) => {
          deleted.push(grace);
          return lifecycle.deletePod(p, ctx, grace);
        },
      },
    };
    const { ctrl, sink, setup } = controller(() => ({ provider }));
    const p = pod('m');
    ctrl.upsert(p);
    await until(() => sink.last('default/m')?.phase === 'Running');
    expect(ctrl.lookup('default/m')!.worker!.container('main')).toEqual({ restartCount: 0, running: true });
    expect(ctrl.activePods().map((x) => x.metadata!.name)).toEqual(['m']);
    finish();
    await until(() => sink.last('default/m')?.phase === 'Succeeded');
    expect(sink.last('default/m')!.containerStatuses![0]!.state!.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(sink.of('default/m').map((s) => s.phase)).toEqual(['Pending', 'Running', 'Succeeded']);
    expect(ctrl.activePods()).toEqual([]);
    ctrl.upsert({ ...p, metadata: { ...p.metadata, deletionTimestamp: new Date(), deletionGracePeriodSeconds: 7 } });
    await until(() => sink.deleted.includes('default/m'));
    expect(deleted).toEqual([7000]);
    expect(setup.teardowns).toEqual(['uid-m']);
  });

  it('does not admit (nor keep) a pod while the route says retry later, then admits it', async () => {
    const provider = new FakePodProvider();
    provider.report = { phase: 'Pending' };
    let calls = 0;
    const { ctrl, sink, events } = controller(() => (++calls < 3 ? { retryAfterMs: 5, message: 'RuntimeClasses not listed yet' } : { provider }));
    ctrl.upsert(pod('r'));
    await until(() => provider.calls.length === 1);
    expect(calls).toBe(3);
    expect(sink.of('default/r').every((s) => s.phase === 'Pending')).toBe(true);
    expect(events.list).toEqual([]);
  });
});

/**
 * Sidecar containers (init containers with `restartPolicy: Always`) and
 * container restart rules through the one PodWorker with a container
 * provider: start order, restarts whatever the pod's policy, the end of a
 * Job-style pod, termination order, statuses and conditions (upstream
 * kuberuntime computeInitContainerActions / terminationOrdering, getPhase,
 * status/generate.go).
 */
import { describe, expect, it } from 'vitest';
import type { V1Container, V1Pod, V1PodCondition } from '@kubernetes/client-node';
import { Backoff } from '../../../core/backoff/index.ts';
import { PodWorker } from '../../../core/pods/pod-worker.ts';
import { podRequest } from '../../../core/pods/admission.ts';
import { containerShouldRestart } from '../../../core/pods/restart-rules.ts';
import { FakeProvider, fakeSetup, memoryLogger } from './fakes.ts';

const sidecar = (name: string, more: Partial<V1Container> = {}): V1Container => ({ name, image: `registry.test/${name}:v1`, restartPolicy: 'Always', ...more });
const plain = (name: string, more: Partial<V1Container> = {}): V1Container => ({ name, image: `registry.test/${name}:v1`, ...more });

function pod(initContainers: V1Container[], o: { restartPolicy?: string; containers?: V1Container[] } = {}): V1Pod {
  return {
    metadata: { name: 'p', namespace: 'default', uid: 'uid-p' },
    spec: { restartPolicy: o.restartPolicy ?? 'Never', initContainers, containers: o.containers ?? [plain('main')] },
  };
}

function harness(p: V1Pod) {
  const provider = new FakeProvider();
  const events: string[] = [];
  const worker = new PodWorker(p, {
    provider,
    setup: fakeSetup(),
    hostIP: '10.0.0.9',
    // The first restart of a container goes at once; later ones wait (not reached here).
    backoff: { restart: new Backoff(60_000, 120_000), pull: new Backoff(60_000, 120_000), volume: new Backoff(60_000, 120_000) },
    requeue: () => undefined,
    context: (_p, signal) => ({ log: memoryLogger(), event: () => undefined, signal, podDir: '/nonexistent/pods/uid-p' }),
    event: (_t, reason, note) => events.push(`${reason}: ${note}`),
    killSlackMs: 20,
  });
  const end = async (name: string, code: number) => {
    provider.latest(name).end(code);
    await provider.latest(name).exit;
    await new Promise((r) => setImmediate(r)); // the exit is recorded after the termination message is read
  };
  const cond = (type: string): V1PodCondition | undefined => worker.status(p).conditions?.find((c) => c.type === type);
  return { provider, worker, events, end, cond };
}

describe('sidecar containers', () => {
  it('start in their turn; the next init container and the app containers start while they run', async () => {
    const p = pod([plain('setup'), sidecar('proxy'), plain('migrate')], { containers: [plain('main')] });
    const { provider, worker, end } = harness(p);
    await worker.reconcile(p);
    expect(provider.names()).toEqual(['setup']);
    await end('setup', 0);
    await worker.reconcile(p);
    // the sidecar has started (no startup probe), so the next init container starts in the same sync
    expect(provider.names()).toEqual(['setup', 'proxy', 'migrate']);
    expect(worker.status(p).phase).toBe('Pending');
    await end('migrate', 0);
    await worker.reconcile(p);
    expect(provider.names()).toEqual(['setup', 'proxy', 'migrate', 'main']);
    expect(provider.runningAtStart.at(-1)).toEqual(['proxy']);
    const s = worker.status(p);
    expect(s.phase).toBe('Running');
    expect(s.initContainerStatuses!.map((c) => [c.name, c.ready, c.started])).toEqual([
      ['setup', true, false],
      ['proxy', true, true],
      ['migrate', true, false],
    ]);
  });

  it('a sidecar that exits is restarted in a Never pod, before and after the app containers started', async () => {
    const p = pod([sidecar('log')]);
    const { provider, worker, end } = harness(p);
    await worker.reconcile(p);
    expect(provider.names()).toEqual(['log', 'main']);
    await end('log', 0);
    await worker.reconcile(p);
    expect(provider.names()).toEqual(['log', 'main', 'log']);
    const s = worker.status(p);
    expect(s.phase).toBe('Running');
    expect(s.initContainerStatuses![0]).toMatchObject({ name: 'log', restartCount: 1, state: { running: {} }, lastState: { terminated: { exitCode: 0 } } });
    expect(s.containerStatuses![0]).toMatchObject({ name: 'main', restartCount: 0 });
  });

  it('a Job-style pod: the main container exits 0, its sidecars are stopped last first, the pod Succeeds', async () => {
    const p = pod([sidecar('first'), sidecar('second')], { containers: [plain('main')] });
    const { provider, worker, end, events } = harness(p);
    await worker.reconcile(p);
    expect(provider.names()).toEqual(['first', 'second', 'main']);
    await end('main', 0);
    expect(worker.status(p).phase).toBe('Running'); // the sidecars still run
    await worker.reconcile(p);
    expect(provider.stops).toEqual(['second', 'first']);
    expect(events.filter((e) => e.startsWith('Killing'))).toEqual(['Killing: Stopping container first', 'Killing: Stopping container second']);
    const s = worker.status(p);
    expect(s.phase).toBe('Succeeded');
    expect(worker.finished(p)).toBe(true);
    // stopped sidecars are not restarted
    await worker.reconcile(p);
    expect(provider.names()).toEqual(['first', 'second', 'main']);
    expect(s.conditions?.find((c) => c.type === 'Initialized')).toMatchObject({ status: 'True', reason: 'PodCompleted' });
  });

  it('a main container that fails makes the pod Failed once the sidecars stopped (a sidecar killed with 137 does not count)', async () => {
    const p = pod([sidecar('proxy')]);
    const { worker, end } = harness(p);
    await worker.reconcile(p);
    await end('main', 3);
    await worker.reconcile(p);
    const s = worker.status(p);
    expect(s.initContainerStatuses![0]!.state!.terminated).toMatchObject({ exitCode: 137 });
    expect(s.phase).toBe('Failed');
  });

  it('deletion stops the app containers first, then the sidecars in reverse order', async () => {
    const p = pod([sidecar('a'), plain('once'), sidecar('b'), sidecar('c')], { restartPolicy: 'Always', containers: [plain('m1'), plain('m2')] });
    const { provider, worker, end } = harness(p);
    await worker.reconcile(p);
    await end('once', 0);
    await worker.reconcile(p);
    expect(provider.names()).toEqual(['a', 'once', 'b', 'c', 'm1', 'm2']);
    await worker.terminate(p, 30_000);
    expect(provider.stops.slice(0, 2).sort()).toEqual(['m1', 'm2']);
    expect(provider.stops.slice(2)).toEqual(['c', 'b', 'a']);
  });

  it('Ready and ContainersReady include the sidecars; Initialized waits for a sidecar to start', async () => {
    const p = pod([sidecar('proxy')]);
    const { provider, worker, cond } = harness(p);
    expect(cond('Initialized')).toMatchObject({ status: 'False', reason: 'ContainersNotInitialized', message: 'containers with incomplete status: [proxy]' });
    await worker.reconcile(p);
    expect(cond('Initialized')).toMatchObject({ status: 'True' });
    expect(cond('Ready')).toMatchObject({ status: 'True' });
    provider.latest('proxy').end(1);
    await provider.latest('proxy').exit;
    await new Promise((r) => setImmediate(r));
    expect(cond('Ready')).toMatchObject({ status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [proxy]' });
    expect(cond('Initialized')).toMatchObject({ status: 'True' }); // initialized for good once an app container ran
  });

  it('an init container that fails for good in a Never pod stops the sidecars started before it; the pod is Failed', async () => {
    const p = pod([sidecar('proxy'), plain('check')]);
    const { provider, worker, end } = harness(p);
    await worker.reconcile(p);
    expect(provider.names()).toEqual(['proxy', 'check']);
    await end('check', 2);
    await worker.reconcile(p);
    expect(provider.stops).toEqual(['proxy']);
    expect(provider.names()).toEqual(['proxy', 'check']);
    expect(worker.status(p).phase).toBe('Failed');
  });
});

describe('container restart rules', () => {
  const rules = (values: number[], operator = 'In') => [{ action: 'Restart', exitCodes: { operator, values } }];

  it('containerShouldRestart follows rules, then the container policy, then the pod policy', () => {
    const never = { restartPolicy: 'Never', containers: [] };
    expect(containerShouldRestart(plain('a'), never, 1)).toBe(false);
    expect(containerShouldRestart(plain('a', { restartPolicy: 'Never', restartPolicyRules: rules([42]) }), never, 42)).toBe(true);
    expect(containerShouldRestart(plain('a', { restartPolicy: 'Never', restartPolicyRules: rules([42]) }), never, 1)).toBe(false);
    expect(containerShouldRestart(plain('a', { restartPolicy: 'Never', restartPolicyRules: rules([0], 'NotIn') }), never, 5)).toBe(true);
    expect(containerShouldRestart(plain('a', { restartPolicy: 'OnFailure' }), never, 1)).toBe(true);
    expect(containerShouldRestart(plain('a', { restartPolicy: 'OnFailure' }), never, 0)).toBe(false);
    // rules without a container restartPolicy are ignored (the API requires one)
    expect(containerShouldRestart(plain('a', { restartPolicyRules: rules([42]) }), never, 42)).toBe(false);
    expect(containerShouldRestart(plain('a'), { containers: [] }, 0)).toBe(true); // the pod default is Always
  });

  it('a container of a Never pod is restarted on an exit code its rules list, and ends the pod on another', async () => {
    const p = pod([], { containers: [plain('main', { restartPolicy: 'Never', restartPolicyRules: rules([42]) })] });
    const { provider, worker, end } = harness(p);
    await worker.reconcile(p);
    await end('main', 42);
    expect(worker.status(p).phase).toBe('Running'); // it restarts
    await worker.reconcile(p);
    expect(provider.names()).toEqual(['main', 'main']);
    await end('main', 1);
    await worker.reconcile(p);
    expect(provider.names()).toEqual(['main', 'main']);
    expect(worker.status(p).phase).toBe('Failed');
  });
});

describe('pod requests with sidecars (upstream resourcehelper.PodRequests)', () => {
  it('sidecars add to the app containers and to every init container after them', () => {
    const req = (cpu: string) => ({ resources: { requests: { cpu } } });
    const p = pod([plain('big', req('900m')), sidecar('s1', req('100m')), plain('after', req('500m')), sidecar('s2', req('50m'))], {
      containers: [plain('main', req('200m'))],
    });
    // max(900, 100+500=600, 100+50 + 200 = 350) = 900
    expect(podRequest(p, 'cpu')).toBe(900);
    p.spec!.initContainers![0]!.resources!.requests!.cpu = '10m';
    // max(10, 600, 350) = 600
    expect(podRequest(p, 'cpu')).toBe(600);
  });
});

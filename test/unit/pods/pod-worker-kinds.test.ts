/**
 * Both provider kinds through the one PodWorker: the same scenario with a
 * container `Provider` (core runs the containers) and with a `PodProvider`
 * (the provider owns the pod) — statuses, start failures and back-off,
 * deletion (cancel, terminate, the pod's signal), status-only syncs and the
 * volume cadence. The behaviours the two workers used to differ in are
 * decided in core/pods/pod-worker.ts and tested here once.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import {
  providerError,
  type ContainerStatusReport,
  type PodContext,
  type PodObject,
  type PodProvider,
  type PodStatusReport,
} from '../../../plugin-api/v1/index.ts';
import { Backoff } from '../../../core/backoff/index.ts';
import { PodWorker } from '../../../core/pods/pod-worker.ts';
import { VOLUME_RESYNC_MS } from '../../../core/pods/pod-volumes.ts';
import { FakeProvider, fakeSetup, memoryLogger, VM_PROVIDER } from './fakes.ts';

const pod = (restartPolicy = 'Never'): V1Pod => ({
  metadata: { name: 'p', namespace: 'default', uid: 'uid-p' },
  spec: { restartPolicy, containers: [{ name: 'main', image: 'registry.test/main:v1' }] },
});

/** A pod provider whose one container runs once created, until the test ends it or the pod is deleted. */
function toyPodProvider() {
  const state = { calls: [] as string[], created: false, createError: undefined as Error | undefined, exitCode: undefined as number | undefined };
  const t = new Date('2026-01-01T00:00:00Z');
  const main = (s: ContainerStatusReport['state'], ready: boolean): ContainerStatusReport => ({ name: 'main', ready, restartCount: 0, state: s });
  const provider: PodProvider = {
    ...VM_PROVIDER,
    handlers: [...VM_PROVIDER.handlers],
    pods: {
      createPod: async (p: PodObject) => {
        state.calls.push(`create ${p.metadata.name}`);
        if (state.createError) throw state.createError;
        state.created = true;
      },
      deletePod: async (_p: PodObject, ctx: PodContext, graceMs: number) => {
        state.calls.push(`delete ${graceMs} aborted=${ctx.signal.aborted}`);
        state.exitCode ??= 137;
      },
      getPodStatus: (): PodStatusReport | undefined => {
        if (!state.created) return undefined;
        const code = state.exitCode;
        if (code === undefined) return { phase: 'Running', containers: [main({ running: { startedAt: t } }, true)] };
        const terminated = { exitCode: code, reason: code ? 'Error' : 'Completed', startedAt: t, finishedAt: t };
        return { phase: code === 0 ? 'Succeeded' : 'Failed', containers: [main({ terminated }, false)] };
      },
    },
  };
  return { provider, state };
}

/** One kind: its provider, plus how the test makes its container end, makes starts fail, and sees what was started and stopped. */
interface Kind {
  provider: FakeProvider | PodProvider;
  end(code: number): Promise<void>;
  failStarts(): void;
  /** What the provider was asked to run, in order. */
  starts(): number;
  /** How the running pod was stopped (grace, and whether the pod's signal was already aborted), if it was. */
  stopped(): string | undefined;
  /** The restart back-off key of a failed start. */
  failedStartKey: string;
  /** The waiting reason a failed start shows. */
  failedStartReason: string;
}

const kinds: Record<string, () => Kind> = {
  'container provider': () => {
    const provider = new FakeProvider();
    return {
      provider,
      end: async (code) => {
        provider.latest('main').end(code);
        await provider.latest('main').exit;
        await new Promise((r) => setImmediate(r)); // the termination message is read before the record is updated
      },
      failStarts: () => (provider.startError = () => new Error('exec format error')),
      starts: () => provider.started.length,
      stopped: () => (provider.started[0]?.stoppedWith === undefined ? undefined : `grace ${provider.started[0].stoppedWith}`),
      failedStartKey: 'uid-p/main/create',
      failedStartReason: 'RunContainerError',
    };
  },
  'pod provider': () => {
    const { provider, state } = toyPodProvider();
    return {
      provider,
      end: async (code) => {
        state.exitCode = code;
      },
      failStarts: () => (state.createError = providerError('Unavailable', 'no VM slots')),
      starts: () => state.calls.filter((c) => c.startsWith('create')).length,
      stopped: () => state.calls.find((c) => c.startsWith('delete'))?.replace(/^delete (\d+)/, 'grace $1'),
      failedStartKey: 'uid-p/create',
      failedStartReason: 'ContainerCreating',
    };
  },
};

function harness(kind: Kind) {
  const setup = fakeSetup();
  const requeues: number[] = [];
  const events: string[] = [];
  const signals: AbortSignal[] = [];
  const backoff = { restart: new Backoff(60_000, 120_000), pull: new Backoff(60_000, 120_000), volume: new Backoff(60_000, 120_000) };
  const worker = new PodWorker(pod(), {
    provider: kind.provider,
    setup,
    hostIP: '10.0.0.9',
    backoff,
    requeue: (ms) => requeues.push(ms),
    context: (_p, signal) => {
      signals.push(signal);
      return { log: memoryLogger(), event: () => undefined, signal, podDir: '/nonexistent/pods/uid-p' };
    },
    event: (_t, reason) => events.push(reason),
    killSlackMs: 20,
  });
  return { setup, requeues, events, signals, backoff, worker };
}

const mainState = (w: PodWorker) => w.status(pod()).containerStatuses![0]!.state!;

afterEach(() => {
  vi.useRealTimers();
});

for (const [name, make] of Object.entries(kinds)) {
  describe(`one PodWorker, ${name}`, () => {
    it('statuses: ContainerCreating before the first sync, Running once started, Succeeded when the container exits 0', async () => {
      const k = make();
      const { worker } = harness(k);
      expect(worker.status(pod()).phase).toBe('Pending');
      expect(mainState(worker)).toEqual({ waiting: { reason: 'ContainerCreating' } });
      await worker.reconcile(pod());
      expect(k.starts()).toBe(1);
      expect(worker.status(pod()).phase).toBe('Running');
      expect(mainState(worker)).toHaveProperty('running');
      expect(worker.finished(pod())).toBe(false);
      expect(worker.container('main')).toMatchObject({ restartCount: 0, running: true });
      await k.end(0);
      expect(worker.status(pod()).phase).toBe('Succeeded');
      expect(mainState(worker).terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
      expect(worker.finished(pod())).toBe(true);
      await worker.reconcile(pod());
      expect(k.starts()).toBe(1);
    });

    it('a failed start is re-queued after the restart back-off; terminate frees the pod back-off entries', async () => {
      const k = make();
      const { worker, requeues, backoff } = harness(k);
      k.failStarts();
      await worker.reconcile(pod());
      expect(k.starts()).toBe(k.provider instanceof FakeProvider ? 0 : 1); // a container provider fails in startContainer, before it records a start
      expect(mainState(worker).waiting?.reason).toBe(k.failedStartReason);
      expect(requeues.at(-1)).toBe(60_000);
      expect(backoff.restart.delay(k.failedStartKey)).toBe(60_000);
      await worker.terminate(pod(), 0);
      expect(backoff.restart.delay(k.failedStartKey)).toBe(0);
    });

    it('a cancelled pod (deletion requested) starts nothing, and terminate then has nothing to stop', async () => {
      const k = make();
      const { worker, setup } = harness(k);
      worker.cancel();
      await worker.reconcile(pod());
      expect(setup.prepares).toBe(0);
      expect(k.starts()).toBe(0);
      await worker.terminate(pod(), 5_000);
      expect(k.stopped()).toBeUndefined();
    });

    it('deletion of a running pod: cancel() aborts in-flight work by kind; terminate stops the pod with its grace period, then aborts the pod signal', async () => {
      const k = make();
      const { worker, signals } = harness(k);
      await worker.reconcile(pod());
      expect(k.starts()).toBe(1);
      worker.cancel();
      // Decided once: a container provider's in-flight pulls and starts are aborted at once; a pod provider's
      // signal keeps meaning "the grace period is over", so deletePod still gets its grace.
      expect(signals[0]!.aborted).toBe(k.provider instanceof FakeProvider);
      await worker.terminate(pod(), 5_000);
      expect(k.stopped()).toBe(k.provider instanceof FakeProvider ? 'grace 5000' : 'grace 5000 aborted=false');
      expect(signals[0]!.aborted).toBe(true);
      expect(signals).toHaveLength(1);
      expect(worker.status(pod()).phase).toBe('Failed');
    });

    it('a status-only wake (statusChanged) re-queues at once and skips a due volume re-sync once; none after termination', async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
      const k = make();
      const { worker, setup, requeues } = harness(k);
      await worker.reconcile(pod());
      expect(setup.prepares).toBe(1);
      vi.setSystemTime(new Date(Date.now() + VOLUME_RESYNC_MS));
      worker.statusChanged();
      expect(requeues.at(-1)).toBe(0);
      await worker.reconcile(pod());
      expect(setup.prepares).toBe(1);
      await worker.reconcile(pod());
      expect(setup.prepares).toBe(2);
      await worker.terminate(pod(), 0);
      const n = requeues.length;
      worker.statusChanged();
      expect(requeues).toHaveLength(n);
    });
  });
}

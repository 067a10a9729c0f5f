/** The one volume re-sync cadence, alone and through both workers (container provider and pod provider). */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { API_VERSION, type PodObject, type PodProvider, type PodStatusReport } from '../../../plugin-api/v1/index.ts';
import { Backoff } from '../../../core/backoff/index.ts';
import { PodVolumes, VOLUME_RESYNC_MS } from '../../../core/pods/pod-volumes.ts';
import { PodWorker } from '../../../core/pods/pod-worker.ts';
import { FakeProvider, fakeSetup, memoryLogger } from './fakes.ts';

const pod = (): V1Pod => ({
  metadata: { name: 'p', namespace: 'default', uid: 'uid-p' },
  spec: { restartPolicy: 'Always', containers: [{ name: 'main', image: 'registry.test/main:v1' }] },
});

afterEach(() => {
  vi.useRealTimers();
});

describe('PodVolumes', () => {
  it('sets up on the first sync, then re-syncs only once VOLUME_RESYNC_MS passed since the last preparation started', async () => {
    let now = 1_000_000;
    const setup = fakeSetup();
    const v = new PodVolumes({ setup, backoff: new Backoff(500, 2000), requeue: () => undefined, event: () => undefined, now: () => now });
    expect(v.isReady).toBe(false);
    const before = v.prepared;
    expect(before.size).toBe(0);
    expect(await v.sync(pod())).toBe(true);
    expect(v.isReady).toBe(true);
    // What the fake's prepare() returned, not the empty map of a pod not prepared yet.
    expect(v.prepared).not.toBe(before);
    expect(v.prepared).toEqual(new Map());
    now += VOLUME_RESYNC_MS - 1;
    expect(await v.sync(pod())).toBe(true);
    expect(setup.prepares).toBe(1);
    now += 1;
    expect(await v.sync(pod())).toBe(true);
    expect(setup.prepares).toBe(2);
  });

  it('re-syncs at once when a watched object the pod refers to changed since the last preparation started', async () => {
    let now = 1_000_000;
    let changedAt = 0;
    const setup = Object.assign(fakeSetup(), { objectsChangedSince: (_p: V1Pod, since: number) => changedAt >= since });
    const v = new PodVolumes({ setup, backoff: new Backoff(500, 2000), requeue: () => undefined, event: () => undefined, now: () => now });
    expect(await v.sync(pod())).toBe(true);
    now += 1000;
    expect(await v.sync(pod())).toBe(true);
    expect(setup.prepares).toBe(1);
    changedAt = now - 500; // changed between the two syncs
    expect(await v.sync(pod())).toBe(true);
    expect(setup.prepares).toBe(2);
    now += 1000;
    expect(await v.sync(pod())).toBe(true);
    expect(setup.prepares).toBe(2);
  });

  it('a failure is one FailedMount event per volume and a back-off re-queue capped at 30 s; success resets the back-off', async () => {
    const setup = fakeSetup();
    const events: string[] = [];
    const requeues: number[] = [];
    const backoff = new Backoff(20_000, 120_000);
    const v = new PodVolumes({ setup, backoff, requeue: (ms) => requeues.push(ms), event: (t, r, n) => events.push(`${t} ${r}: ${n}`) });
    const ok = setup.prepare;
    setup.prepare = async () => {
      throw Object.assign(new Error('x'), { messages: ['vol a failed', 'vol b failed'] });
    };
    expect(await v.sync(pod())).toBe(false);
    expect(await v.sync(pod())).toBe(false);
    expect(v.isReady).toBe(false);
    expect(events).toEqual([
      'Warning FailedMount: vol a failed',
      'Warning FailedMount: vol b failed',
      'Warning FailedMount: vol a failed',
      'Warning FailedMount: vol b failed',
    ]);
    expect(requeues).toEqual([20_000, 30_000]);
    setup.prepare = ok;
    expect(await v.sync(pod())).toBe(true);
    expect(backoff.delay('uid-p/volumes')).toBe(0);
  });

  it('a volume prepared as unavailable re-queues the pod for its retryAt, and that sync prepares again before the minute', async () => {
    let now = 1_000_000;
    const setup = fakeSetup();
    const requeues: number[] = [];
    let retryAt: number | undefined = now + 10_000;
    setup.prepare = async () => {
      setup.prepares++;
      const unavailable = retryAt === undefined ? undefined : { reason: 'ImagePullBackOff', message: 'Back-off pulling image "x"', retryAt };
      return new Map([['data', { name: 'data', hostPath: '/nonexistent', readOnly: true, kind: 'image', unavailable }]]);
    };
    const v = new PodVolumes({ setup, backoff: new Backoff(500, 2000), requeue: (ms) => requeues.push(ms), event: () => undefined, now: () => now });
    expect(await v.sync(pod())).toBe(true);
    expect(v.isReady).toBe(true);
    expect(requeues).toEqual([10_000]);
    now += 9_999;
    expect(await v.sync(pod())).toBe(true);
    expect(setup.prepares).toBe(1);
    now += 1;
    retryAt = undefined; // pulled this time
    expect(await v.sync(pod())).toBe(true);
    expect(setup.prepares).toBe(2);
    expect(requeues).toEqual([10_000]);
    now += 1000;
    expect(await v.sync(pod())).toBe(true);
    expect(setup.prepares).toBe(2);
  });
});

/** A pod provider that accepts every pod and reports it running. */
function podProvider(): PodProvider {
  return {
    name: 'vm',
    apiVersion: API_VERSION,
    handlers: ['vm'],
    architecture: 'amd64',
    os: 'linux',
    runtimeVersion: 'vm://1',
    pods: {
      createPod: async (_p: PodObject) => undefined,
      deletePod: async () => undefined,
      getPodStatus: (): PodStatusReport => ({ phase: 'Running' }),
    },
  } as PodProvider;
}

const backoffs = () => ({ restart: new Backoff(60_000, 120_000), pull: new Backoff(60_000, 120_000), volume: new Backoff(60_000, 120_000) });

describe('volume re-sync cadence, the same for both provider kinds through the one worker', () => {
  const common = () => {
    const setup = fakeSetup();
    const deps = {
      setup,
      hostIP: '10.0.0.9',
      requeue: () => undefined,
      event: () => undefined,
      context: (_p: V1Pod, signal: AbortSignal) => ({ log: memoryLogger(), event: () => undefined, signal, podDir: '/nonexistent/pods/uid-p' }),
    };
    return { setup, deps };
  };
  const workers = {
    'container provider': () => {
      const { setup, deps } = common();
      const w = new PodWorker(pod(), { ...deps, provider: new FakeProvider(), backoff: backoffs() });
      return { setup, w };
    },
    'pod provider': () => {
      const { setup, deps } = common();
      const w = new PodWorker(pod(), { ...deps, provider: podProvider(), backoff: backoffs() });
      return { setup, w };
    },
  };
  for (const [kind, make] of Object.entries(workers)) {
    it(`${kind}: volumes are prepared once per VOLUME_RESYNC_MS however often the pod is synced`, async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
      const { setup, w } = make();
      await w.reconcile(pod());
      await w.reconcile(pod());
      await w.reconcile(pod());
      expect(setup.prepares).toBe(1);
      expect(w.status(pod()).conditions?.find((c) => c.type === 'PodReadyToStartContainers')?.status).toBe('True');
      vi.setSystemTime(new Date(Date.now() + VOLUME_RESYNC_MS));
      await w.reconcile(pod());
      await w.reconcile(pod());
      expect(setup.prepares).toBe(2);
      await w.terminate(pod(), 0);
    });
  }
});

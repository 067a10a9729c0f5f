import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ResourceV1ResourceClaim, V1Pod } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readCheckpoint } from '../../../core/dra/checkpoint.ts';
import { DraManager, podClaimNames } from '../../../core/dra/dra-manager.ts';
import type { DraClaimRef, DraDriverClient } from '../../../core/dra/driver-client.ts';
import { DraDriverRegistry } from '../../../core/dra/driver-registry.ts';
import { createDraPluginHandler } from '../../../core/dra/dra-plugin-handler.ts';
import { memLogger } from '../devices/helpers.ts';

const DRV = 'drv.example.com';

/** A driver that records its calls; `fail` makes the next calls return an error. */
interface FakeDriver {
  calls: Array<{ op: 'prepare' | 'unprepare'; uids: string[] }>;
  fail: string | undefined;
  closed: number;
  client: DraDriverClient;
}

function fakeDriver(): FakeDriver {
  const calls: FakeDriver['calls'] = [];
  const d: FakeDriver = {
    calls,
    fail: undefined as string | undefined,
    closed: 0,
    client: {
      async nodePrepareResources(claims: readonly DraClaimRef[]) {
        calls.push({ op: 'prepare', uids: claims.map((c) => c.uid) });
        return Object.fromEntries(
          claims.map((c) => [
            c.uid,
            d.fail
              ? { error: d.fail }
              : {
                  devices: [
                    { requestNames: ['a'], poolName: 'p', deviceName: 'dev-a', cdiDeviceIds: [`${DRV}/t=${c.uid}-a`] },
                    { requestNames: ['b/sub'], poolName: 'p', deviceName: 'dev-b', cdiDeviceIds: [`${DRV}/t=${c.uid}-b`] },
                  ],
                },
          ]),
        );
      },
      async nodeUnprepareResources(claims: readonly DraClaimRef[]) {
        calls.push({ op: 'unprepare', uids: claims.map((c) => c.uid) });
        return Object.fromEntries(claims.map((c) => [c.uid, d.fail ? { error: d.fail } : {}]));
      },
      close: () => {
        d.closed++;
      },
    },
  };
  return d;
}

function claim(name: string, uid: string, reservedFor: string[], allocated = true): ResourceV1ResourceClaim {
  return {
    metadata: { name, namespace: 'ns', uid },
    spec: {},
    status: {
      reservedFor: reservedFor.map((u) => ({ resource: 'pods', name: 'x', uid: u })),
      allocation: allocated ? { devices: { results: [{ request: 'a', driver: DRV, pool: 'p', device: 'dev-a' }] } } : undefined,
    },
  } as ResourceV1ResourceClaim;
}

function pod(uid: string, claims: { pod: string; claim?: string; template?: string; generated?: string }[]): V1Pod {
  return {
    metadata: { name: `pod-${uid}`, namespace: 'ns', uid },
    spec: {
      resourceClaims: claims.map((c) => ({ name: c.pod, resourceClaimName: c.claim, resourceClaimTemplateName: c.template })),
      containers: [
        { name: 'all', resources: { claims: claims.map((c) => ({ name: c.pod })) } },
        { name: 'only-b', resources: { claims: [{ name: claims[0]!.pod, request: 'b' }] } },
        { name: 'none' },
      ],
    },
    status: { resourceClaimStatuses: claims.filter((c) => c.template).map((c) => ({ name: c.pod, resourceClaimName: c.generated })) },
  };
}

function setup(dir = mkdtempSync(join(tmpdir(), 'nodelet-dra-'))) {
  const claims = new Map<string, ResourceV1ResourceClaim>();
  const drivers = new DraDriverRegistry({ graceMs: 1000, log: memLogger() });
  let active: V1Pod[] = [];
  let ready = true;
  const mk = () =>
    new DraManager({
      checkpointPath: join(dir, 'dra_manager_state'),
      drivers,
      log: memLogger(),
      getClaim: async (_ns, name) => claims.get(name),
      activePods: () => active,
      sourcesReady: () => ready,
    });
  return {
    dir,
    claims,
    drivers,
    mk,
    setActive: (p: V1Pod[]) => (active = p),
    setReady: (r: boolean) => (ready = r),
  };
}

describe('DRA manager', () => {
  afterEach(() => vi.useRealTimers());

  it('resolves pod claim names: direct, generated from a template, none needed, not generated yet', () => {
    expect(
      podClaimNames(
        pod('u', [
          { pod: 'a', claim: 'c1' },
          { pod: 'b', template: 't', generated: 'g-1' },
        ]),
      ),
    ).toEqual([
      { podClaimName: 'a', claimName: 'c1' },
      { podClaimName: 'b', claimName: 'g-1' },
    ]);
    expect(podClaimNames(pod('u', [{ pod: 'b', template: 't' }]))).toEqual([]);
    const p = pod('u', [{ pod: 'b', template: 't' }]);
    p.status!.resourceClaimStatuses = [];
    expect(() => podClaimNames(p)).toThrow(/no generated ResourceClaim name for "b" yet/);
  });

  it('prepares a shared claim once, checkpoints both pods, unprepares after the last pod is released; a new manager keeps the state', async () => {
    const s = setup();
    const d = fakeDriver();
    s.drivers.register(DRV, '/sock', d.client);
    s.claims.set('shared', claim('shared', 'c-1', ['p1', 'p2']));
    const m = s.mk();
    await m.prepare(pod('p1', [{ pod: 'gpu', claim: 'shared' }]));
    await m.prepare(pod('p2', [{ pod: 'gpu', claim: 'shared' }]));
    expect(d.calls).toEqual([{ op: 'prepare', uids: ['c-1'] }]);
    expect(Object.keys(readCheckpoint(join(s.dir, 'dra_manager_state'))[0]!.PodUIDs).sort()).toEqual(['p1', 'p2']);

    const p1 = pod('p1', [{ pod: 'gpu', claim: 'shared' }]);
    expect(m.cdiDeviceIds(p1, p1.spec!.containers[0]!)).toEqual([`${DRV}/t=c-1-a`, `${DRV}/t=c-1-b`]);
    expect(m.cdiDeviceIds(p1, p1.spec!.containers[1]!)).toEqual([`${DRV}/t=c-1-b`]); // request b serves sub-request b/sub
    expect(m.cdiDeviceIds(p1, p1.spec!.containers[2]!)).toEqual([]);

    expect(m.dynamicResources(p1, p1.spec!.containers[1]!)).toEqual([
      { claimName: 'shared', claimNamespace: 'ns', resources: [{ driverName: DRV, poolName: 'p', deviceName: 'dev-b', cdiDevices: [`${DRV}/t=c-1-b`] }] },
    ]);
    expect(m.dynamicResources(p1, p1.spec!.containers[2]!)).toEqual([]);

    const again = s.mk(); // a restarted nodelet
    await again.prepare(p1);
    expect(d.calls).toHaveLength(1);
    await again.release('p1');
    expect(d.calls).toHaveLength(1);
    await again.release('p2');
    expect(d.calls).toEqual([
      { op: 'prepare', uids: ['c-1'] },
      { op: 'unprepare', uids: ['c-1'] },
    ]);
    expect(readCheckpoint(join(s.dir, 'dra_manager_state'))).toEqual([]);
  });

  it('refuses to prepare a claim that is not reserved for the pod, not allocated, or whose driver is not registered, naming it', async () => {
    const s = setup();
    const m = s.mk();
    s.claims.set('c', claim('c', 'c-2', ['other']));
    const p = pod('p1', [{ pod: 'gpu', claim: 'c' }]);
    await expect(m.prepare(p)).rejects.toThrow(/not allowed to use ResourceClaim c \(c-2\)/);
    s.claims.set('c', claim('c', 'c-2', ['p1'], false));
    await expect(m.prepare(p)).rejects.toThrow(/ResourceClaim ns\/c is not allocated/);
    s.claims.set('c', claim('c', 'c-2', ['p1']));
    await expect(m.prepare(p)).rejects.toThrow(`DRA driver ${DRV} is not registered (ResourceClaim ns/c)`);
    await expect(m.prepare(pod('p1', [{ pod: 'gpu', claim: 'missing' }]))).rejects.toThrow(/ResourceClaim ns\/missing of pod ns\/pod-p1 not found/);
    const d = fakeDriver();
    d.fail = 'boom';
    s.drivers.register(DRV, '/sock', d.client);
    await expect(m.prepare(p)).rejects.toThrow(`NodePrepareResources of DRA driver ${DRV} failed for ResourceClaim ns/c: boom`);
    d.fail = undefined;
    await m.prepare(p);
    expect(m.snapshot().map((c) => c.ClaimUID)).toEqual(['c-2']);
  });

  it('an unprepare that fails keeps the claim; reconcile retries it; pods not active are dropped only once the sources are ready', async () => {
    const s = setup();
    const d = fakeDriver();
    s.drivers.register(DRV, '/sock', d.client);
    s.claims.set('c', claim('c', 'c-3', ['p1']));
    const m = s.mk();
    const p = pod('p1', [{ pod: 'gpu', claim: 'c' }]);
    await m.prepare(p);
    s.setReady(false);
    s.setActive([]);
    await m.reconcile();
    expect(m.snapshot()[0]!.PodUIDs).toEqual({ p1: {} });
    s.setReady(true);
    s.setActive([p]);
    await m.reconcile();
    expect(m.snapshot()).toHaveLength(1);
    d.fail = 'busy';
    s.setActive([]);
    await m.reconcile();
    expect(m.snapshot()).toHaveLength(1);
    expect(m.snapshot()[0]!.PodUIDs).toEqual({});
    d.fail = undefined;
    await m.reconcile();
    expect(m.snapshot()).toEqual([]);
    expect(d.calls.filter((c) => c.op === 'unprepare')).toHaveLength(2);
  });
});

describe('DRAPlugin handler and driver registry', () => {
  afterEach(() => vi.useRealTimers());

  it('prefers v1.DRAPlugin, falls back to v1beta1.DRAPlugin, refuses others', () => {
    const reg = new DraDriverRegistry({ graceMs: 1000, log: memLogger() });
    const chosen: string[] = [];
    const h = createDraPluginHandler(
      reg,
      () => (_e, v) => {
        chosen.push(v);
        return fakeDriver().client;
      },
      memLogger(),
    );
    // The version is chosen synchronously, before registration's first await.
    void h.registerPlugin(DRV, '/a', ['v1beta1.DRAPlugin', 'v1.DRAPlugin', 'v1alpha1.DRAResourceHealth']);
    void h.registerPlugin(DRV, '/a', ['v1beta1.DRAPlugin']);
    expect(chosen).toEqual(['v1.DRAPlugin', 'v1beta1.DRAPlugin']);
    expect(() => h.validatePlugin(DRV, '/a', ['v1alpha3.DRAPlugin'])).toThrow(/none of the supported versions/);
    expect(() => h.validatePlugin('', '/a', ['v1.DRAPlugin'])).toThrow(/name is empty/);
    expect(reg.client(DRV)).toBeDefined();
    reg.stop();
  });

  it("a deregistered driver's slices are wiped after the grace period unless it registers again; another endpoint's deregistration is ignored", async () => {
    vi.useFakeTimers();
    const wiped: (string | undefined)[] = [];
    const reg = new DraDriverRegistry({ graceMs: 30_000, log: memLogger(), wipeSlices: async (d) => void wiped.push(d) });
    const d = fakeDriver();
    reg.register(DRV, '/a', d.client);
    reg.deregister(DRV, '/other');
    expect(reg.client(DRV)).toBeDefined();
    reg.deregister(DRV, '/a');
    expect(reg.client(DRV)).toBeUndefined();
    expect(d.closed).toBe(1);
    await vi.advanceTimersByTimeAsync(29_000);
    reg.register(DRV, '/a', fakeDriver().client);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(wiped).toEqual([]);
    reg.deregister(DRV, '/a');
    await vi.advanceTimersByTimeAsync(30_000);
    expect(wiped).toEqual([DRV]);
    reg.stop();
  });

  it("at start every slice of the node is wiped (all drivers), retried with upstream's back-off until it succeeds", async () => {
    vi.useFakeTimers();
    const tries: (string | undefined)[] = [];
    let failures = 2;
    const reg = new DraDriverRegistry({
      graceMs: 30_000,
      log: memLogger(),
      wipeSlices: async (d) => {
        tries.push(d);
        if (failures-- > 0) throw new Error('Unauthorized');
      },
    });
    reg.wipeAtStart();
    await vi.advanceTimersByTimeAsync(0);
    expect(tries).toEqual([undefined]);
    // A driver registering does not cancel the start-up wipe (it publishes its slices again itself).
    reg.register(DRV, '/a', fakeDriver().client);
    await vi.advanceTimersByTimeAsync(1200); // first retry after 1 s (+ ≤ 20 % jitter)
    expect(tries).toEqual([undefined, undefined]);
    await vi.advanceTimersByTimeAsync(2400); // then 2 s (+ jitter): succeeds
    await vi.advanceTimersByTimeAsync(600_000);
    expect(tries).toEqual([undefined, undefined, undefined]);
    reg.stop();
  });

  it("a failing wipe of a deregistered driver's slices is retried, and given up once the driver registers again", async () => {
    vi.useFakeTimers();
    const tries: (string | undefined)[] = [];
    const reg = new DraDriverRegistry({
      graceMs: 30_000,
      log: memLogger(),
      wipeSlices: async (d) => {
        tries.push(d);
        throw new Error('apiserver unavailable');
      },
    });
    reg.register(DRV, '/a', fakeDriver().client);
    reg.deregister(DRV, '/a');
    await vi.advanceTimersByTimeAsync(30_000 + 1200 + 2400);
    expect(tries).toEqual([DRV, DRV, DRV]);
    reg.register(DRV, '/a', fakeDriver().client);
    await vi.advanceTimersByTimeAsync(600_000);
    expect(tries).toEqual([DRV, DRV, DRV]);
    reg.stop();
  });

  it('a registered driver whose connection is lost (it died leaving its sockets) has its slices wiped after the grace period from the first loss, unless it reconnects', async () => {
    vi.useFakeTimers();
    const wiped: (string | undefined)[] = [];
    const reg = new DraDriverRegistry({ graceMs: 30_000, log: memLogger(), wipeSlices: async (d) => void wiped.push(d) });
    /** A client whose connection the test drives. */
    const connecting = () => {
      const c = { report: (_connected: boolean) => {}, unwatched: 0, client: fakeDriver().client };
      c.client.watchConnection = (fn) => {
        c.report = fn;
        return () => void c.unwatched++;
      };
      return c;
    };
    const a = connecting();
    reg.register(DRV, '/a', a.client);
    a.report(true);
    a.report(false); // the driver is gone; its registration socket stays, so no deregistration comes
    await vi.advanceTimersByTimeAsync(29_000);
    a.report(true); // it came back in time
    await vi.advanceTimersByTimeAsync(60_000);
    expect(wiped).toEqual([]);
    a.report(false);
    await vi.advanceTimersByTimeAsync(20_000);
    reg.deregister(DRV, '/a'); // its socket goes later: the grace period is not restarted
    expect(a.unwatched).toBe(1);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(wiped).toEqual([DRV]);
    // Registered but never connected: not usable, wiped after the grace period (upstream too).
    const b = connecting();
    reg.register(DRV, '/b', b.client);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(wiped).toEqual([DRV, DRV]);
    // A replaced client's reports no longer count.
    const c = connecting();
    reg.register(DRV, '/c', c.client);
    c.report(true);
    expect(b.unwatched).toBe(1);
    b.report(false);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(wiped).toEqual([DRV, DRV]);
    reg.stop();
    expect(c.unwatched).toBe(1);
  });
});

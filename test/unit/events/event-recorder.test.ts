import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { EventsV1Event } from '@kubernetes/client-node';
import { mergePatch, type KubeClients } from '../../../core/kube/client.ts';
import { EventRecorder, logEvents, type Regarding } from '../../../core/events/event-recorder.ts';
import { memoryLogger } from '../pods/fakes.ts';
import { PodStarts } from '../../../core/pods/pod-starts.ts';

/** The two EventsV1Api calls the recorder makes. */
class FakeEventsApi {
  created: { namespace: string; body: EventsV1Event }[] = [];
  patched: { name: string; namespace: string; body: { series: { count: number; lastObservedTime: unknown } }; opts: unknown }[] = [];
  failCreates = 0;

  async createNamespacedEvent({ namespace, body }: { namespace: string; body: EventsV1Event }): Promise<EventsV1Event> {
    if (this.failCreates > 0) {
      this.failCreates--;
      throw Object.assign(new Error('HTTP 500'), { code: 500 });
    }
    this.created.push({ namespace, body });
    return body;
  }

  async patchNamespacedEvent({ name, namespace, body }: { name: string; namespace: string; body: never }, opts: unknown): Promise<EventsV1Event> {
    this.patched.push({ name, namespace, body, opts });
    return {} as EventsV1Event;
  }
}

const pod = (name = 'web', uid = `uid-${name}`, fieldPath?: string): Regarding => ({ kind: 'Pod', namespace: 'team', name, uid, fieldPath });

let api: FakeEventsApi;
let logs: string[];
let rec: EventRecorder;
beforeEach(() => {
  vi.useFakeTimers({ now: new Date('2024-01-01T00:00:00Z') });
  api = new FakeEventsApi();
  logs = [];
  rec = new EventRecorder({ events: api } as unknown as KubeClients, 'node-a', memoryLogger(logs));
});
afterEach(() => {
  vi.useRealTimers();
});

const settle = () => vi.advanceTimersByTimeAsync(0);

describe('EventRecorder', () => {
  it('creates an events.k8s.io/v1 Event named <object>.<unix nanoseconds in hex>', async () => {
    rec.emit(pod('web', 'u1', 'spec.containers{main}'), 'Warning', 'BackOff', 'Back-off restarting failed container main');
    await settle();
    expect(api.created).toHaveLength(1);
    const { namespace, body } = api.created[0]!;
    expect(namespace).toBe('team');
    expect(body.metadata!.name).toMatch(/^web\.[0-9a-f]+$/);
    const ns = BigInt(`0x${body.metadata!.name!.split('.')[1]}`);
    expect(ns / 1_000_000n).toBe(BigInt(Date.now()));
    expect(body).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      type: 'Warning',
      reason: 'BackOff',
      action: 'BackOff',
      note: 'Back-off restarting failed container main',
      reportingController: 'kubelet',
      reportingInstance: 'node-a',
      regarding: { apiVersion: 'v1', kind: 'Pod', namespace: 'team', name: 'web', uid: 'u1', fieldPath: 'spec.containers{main}' },
    });
    expect(body.eventTime).toBeDefined();
  });

  it('gives distinct events distinct names within one millisecond', async () => {
    rec.emit(pod(), 'Normal', 'Pulling', 'a');
    rec.emit(pod(), 'Normal', 'Pulling', 'b');
    await settle();
    const names = api.created.map((c) => c.body.metadata!.name);
    expect(new Set(names).size).toBe(2);
  });

  it('truncates the note to 1024 characters', async () => {
    rec.emit(pod(), 'Warning', 'Failed', 'x'.repeat(5000));
    await settle();
    expect(api.created[0]!.body.note).toHaveLength(1024);
  });

  it('turns identical events within 10 minutes into a series on the first Event', async () => {
    rec.emit(pod(), 'Warning', 'BackOff', 'same');
    await settle();
    const name = api.created[0]!.body.metadata!.name;
    await vi.advanceTimersByTimeAsync(60_000);
    rec.emit(pod(), 'Warning', 'BackOff', 'same');
    await settle();
    await vi.advanceTimersByTimeAsync(60_000);
    rec.emit(pod(), 'Warning', 'BackOff', 'same');
    await settle();
    expect(api.created).toHaveLength(1);
    expect(api.patched.map((p) => [p.name, p.namespace, p.body.series.count])).toEqual([
      [name, 'team', 2],
      [name, 'team', 3],
    ]);
    expect(api.patched[0]!.opts).toBe(mergePatch);
    expect(new Date(String(api.patched[1]!.body.series.lastObservedTime)).toISOString()).toBe('2024-01-01T00:02:00.000Z');
  });

  it('creates a new Event once the last identical one is older than 10 minutes', async () => {
    rec.emit(pod(), 'Warning', 'BackOff', 'same');
    await settle();
    await vi.advanceTimersByTimeAsync(10 * 60_000 + 1);
    rec.emit(pod(), 'Warning', 'BackOff', 'same');
    await settle();
    expect(api.created).toHaveLength(2);
    expect(api.patched).toHaveLength(0);
  });

  it('keeps events apart that differ in field path, type, reason or note', async () => {
    rec.emit(pod('web', 'u', 'spec.containers{a}'), 'Warning', 'Failed', 'n');
    rec.emit(pod('web', 'u', 'spec.containers{b}'), 'Warning', 'Failed', 'n');
    rec.emit(pod('web', 'u', 'spec.containers{a}'), 'Normal', 'Failed', 'n');
    rec.emit(pod('web', 'u', 'spec.containers{a}'), 'Warning', 'BackOff', 'n');
    rec.emit(pod('web', 'u', 'spec.containers{a}'), 'Warning', 'Failed', 'other');
    await settle();
    expect(api.created).toHaveLength(5);
  });

  it('limits a storm on one object to a burst of 25, refilling one per 5 minutes, per object', async () => {
    // Distinct reasons, so the aggregator (same reason, different notes) does not fold them.
    for (let i = 0; i < 40; i++) rec.emit(pod('storm'), 'Warning', `Failed${i}`, `note ${i}`);
    await settle();
    expect(api.created).toHaveLength(25);
    rec.emit(pod('calm'), 'Normal', 'Started', 'ok');
    await settle();
    expect(api.created).toHaveLength(26);
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    rec.emit(pod('storm'), 'Warning', 'Failed', 'late 1');
    rec.emit(pod('storm'), 'Warning', 'Failed', 'late 2');
    await settle();
    expect(api.created.map((c) => c.body.note).slice(26)).toEqual(['late 1']);
  });

  it('aggregates the 10th and later distinct notes of one object, type and reason within 10 minutes into one series', async () => {
    for (let i = 0; i < 12; i++) rec.emit(pod('agg'), 'Warning', 'FailedMount', `volume ${i} failed`);
    await settle();
    expect(api.created.map((c) => c.body.note)).toEqual([
      ...Array.from({ length: 9 }, (_, i) => `volume ${i} failed`),
      '(combined from similar events): volume 9 failed',
    ]);
    expect(api.patched.map((p) => p.body.series.count)).toEqual([2, 3]);
    // A note seen before is still its own series; another reason is not aggregated.
    rec.emit(pod('agg'), 'Warning', 'FailedMount', 'volume 0 failed');
    rec.emit(pod('agg'), 'Warning', 'FailedAttach', 'volume 10 failed');
    await settle();
    expect(api.created.map((c) => c.body.note).slice(10)).toEqual(['volume 10 failed']);
    expect(api.patched.map((p) => p.body.series.count)).toEqual([2, 3, 2]);
    // After 10 quiet minutes the window starts over.
    await vi.advanceTimersByTimeAsync(11 * 60_000);
    rec.emit(pod('agg'), 'Warning', 'FailedMount', 'volume 20 failed');
    await settle();
    expect(api.created.at(-1)!.body.note).toBe('volume 20 failed');
  });

  it('forget() gives an object a fresh bucket and no series', async () => {
    for (let i = 0; i < 30; i++) rec.emit(pod('f'), 'Warning', `Failed${i}`, `n${i}`);
    await settle();
    rec.forget('uid-f');
    rec.emit(pod('f'), 'Warning', 'Failed0', 'n0');
    await settle();
    expect(api.created).toHaveLength(26);
    expect(api.patched).toHaveLength(0);
  });

  it('never throws when the API fails; the event is logged and not remembered for a series', async () => {
    api.failCreates = 1;
    expect(() => rec.emit(pod(), 'Warning', 'Failed', 'x')).not.toThrow();
    await settle();
    expect(logs.some((l) => l.startsWith('warn event not recorded'))).toBe(true);
    rec.emit(pod(), 'Warning', 'Failed', 'x');
    await settle();
    expect(api.created).toHaveLength(1);
    expect(api.patched).toHaveLength(0);
  });

  it("sends one event at a time, in order, as upstream's broadcaster does; a series patch waits its turn", async () => {
    const gates: (() => void)[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const create = api.createNamespacedEvent.bind(api);
    api.createNamespacedEvent = async (a) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise<void>((r) => gates.push(r));
      inFlight--;
      return create(a);
    };
    for (const p of ['a', 'b', 'c']) rec.emit(pod(p), 'Normal', 'Pulled', 'present');
    rec.emit(pod('a'), 'Normal', 'Pulled', 'present'); // a series on a's Event, once it exists
    await settle();
    expect(gates).toHaveLength(1);
    while (gates.length > 0) {
      gates.shift()!();
      await settle();
    }
    expect(maxInFlight).toBe(1);
    expect(api.created.map((c) => c.body.regarding!.name)).toEqual(['a', 'b', 'c']);
    expect(api.patched.map((p) => [p.name, p.body.series.count])).toEqual([[api.created[0]!.body.metadata!.name, 2]]);
  });

  it('logEvents only logs', () => {
    const lines: string[] = [];
    logEvents(memoryLogger(lines)).emit(pod(), 'Normal', 'Pulled', 'done');
    expect(lines).toEqual(['info done {"object":"team/web","type":"Normal","reason":"Pulled"}']);
  });
});

/** A recorder that yields to `starts`, sending to this test's fake API. */
const yielding = (starts: PodStarts) => new EventRecorder({ events: api } as unknown as KubeClients, 'node-a', memoryLogger(logs), starts);

describe('EventRecorder yielding to pod starts', () => {
  it('holds events while a burst of pods is in its first sync, sends them when it ended, and never later than 10 s after emit', async () => {
    const starts = new PodStarts();
    const r = yielding(starts);
    const endA = starts.begin();
    r.emit(pod('a'), 'Normal', 'Pulling', 'Pulling image "x"');
    await settle();
    expect(api.created).toHaveLength(0); // one pod starting alone holds it too ...
    await vi.advanceTimersByTimeAsync(999);
    expect(api.created).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(api.created).toHaveLength(1); // ... 1 s at most: a slow pull shows that late
    const endB = starts.begin();
    r.emit(pod('a'), 'Normal', 'Pulled', 'Successfully pulled image "x"');
    r.emit(pod('b'), 'Normal', 'Created', 'Created container main');
    await vi.advanceTimersByTimeAsync(5000);
    expect(api.created).toHaveLength(1);
    endA(); // one first sync left: the burst is over
    await settle();
    expect(api.created.map((c) => c.body.reason)).toEqual(['Pulling', 'Pulled', 'Created']);
    // A burst that lasts: an event still goes out 10 s after it was emitted.
    const endC = starts.begin();
    r.emit(pod('b'), 'Normal', 'Started', 'Started container main');
    await vi.advanceTimersByTimeAsync(9999);
    expect(api.created).toHaveLength(3);
    await vi.advanceTimersByTimeAsync(1);
    expect(api.created.at(-1)!.body.reason).toBe('Started');
    endB();
    endC();
  });
});

describe('EventRecorder and a pod starting alone', () => {
  it('holds events while one pod is in its first sync and sends them in order when its sync ended (its status posted); none held after it', async () => {
    const starts = new PodStarts();
    const r = yielding(starts);
    const end = starts.begin();
    r.emit(pod('a'), 'Normal', 'Pulled', 'Container image "x" already present on machine');
    r.emit(pod('a'), 'Normal', 'Created', 'Created container: main');
    r.emit(pod('a'), 'Normal', 'Started', 'Started container main');
    await vi.advanceTimersByTimeAsync(20);
    expect(api.created).toEqual([]);
    end();
    await settle();
    expect(api.created.map((c) => c.body.reason)).toEqual(['Pulled', 'Created', 'Started']);
    r.emit(pod('a'), 'Normal', 'Killing', 'Stopping container main');
    await settle();
    expect(api.created.at(-1)!.body.reason).toBe('Killing');
  });
});

describe('PodStarts', () => {
  it('idle() settles once the last first sync ended, or at its deadline; at once when none runs', async () => {
    const starts = new PodStarts();
    let done = 0;
    await starts.idle(Date.now() + 60_000); // none runs
    const a = starts.begin();
    const b = starts.begin();
    void starts.idle(Date.now() + 60_000).then(() => done++);
    void starts.idle(Date.now() + 100).then(() => done++);
    await vi.advanceTimersByTimeAsync(100);
    expect(done).toBe(1); // the deadline of the second
    a();
    await settle();
    expect(done).toBe(1); // one first sync still runs
    b();
    await settle();
    expect(done).toBe(2);
  });

  it('counts first syncs (each end counted once); a burst (2 or more) settles one shared promise once fewer remain', async () => {
    const starts = new PodStarts();
    const a = starts.begin();
    expect(starts.settled()).toBeUndefined(); // one alone is no burst
    const b = starts.begin();
    const c = starts.begin();
    const waiting = starts.settled()!;
    expect(starts.settled()).toBe(waiting);
    let done = false;
    void waiting.then(() => (done = true));
    a();
    a();
    await settle();
    expect([starts.active, done]).toEqual([2, false]);
    b();
    await settle();
    expect([starts.active, done]).toEqual([1, true]);
    expect(starts.settled()).toBeUndefined();
    c();
    expect(starts.active).toBe(0);
  });
});

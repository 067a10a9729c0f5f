/**
 * Events (events.k8s.io/v1) as upstream's recorder emits them
 * (client-go `tools/record` correlator defaults): identical events on one
 * object within 10 minutes become a series (count and lastObservedTime patched
 * instead of a new Event); once 10 events of one object, type and reason with
 * different notes were seen within 10 minutes, further ones are aggregated
 * into one series noted `(combined from similar events): <note>` (upstream's
 * EventAggregator); each object has a token bucket (burst 25, one token per
 * 5 minutes) like upstream's spam filter. Recording never blocks or fails the caller.
 *
 * Sent one at a time, in order, as upstream's broadcaster does (one goroutine
 * writes every event to the sink): events are off a pod's start path, so a
 * burst of pods does not flood the API server with them ahead of its status
 * patches and token requests. At most {@link OUTBOX_MAX} wait (upstream's
 * broadcaster queue length, 1000); further ones are dropped, as upstream drops
 * when its channel is full.
 *
 * While a burst of pods is in its first sync (`yieldTo`), an event waits, at
 * most {@link MAX_YIELD_MS} after it was emitted: those pods' token requests
 * and status patches go to the API server first. While one pod alone is, an
 * event waits for its status post, at most {@link ALONE_YIELD_MS}: sending it
 * would take the main thread and the API server between that pod's pull and
 * start, and alongside its status patch. Upstream's kubelet limits its
 * events to 50 per second instead (`eventRecordQPS`); in a 100-pod burst the
 * 300 start events competed with the starts themselves (bench/README.md,
 * "Events yield to pod starts").
 *
 *     emit ─► outbox (FIFO, ≤ 1000; full: dropped) ─► [a burst of pods starting: wait ≤ 10 s from emit]
 *            ─► [a pod starting alone: wait ≤ 1 s from emit] ─► one create/patch in flight ─► next
 */
import type { EventsV1Event, V1ObjectReference } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import { apiMessage, mergePatch, MicroTime, type KubeClients } from '../kube/index.ts';

const SERIES_WINDOW_MS = 10 * 60_000;
const BURST = 25;
const REFILL_MS = 5 * 60_000;
/** Upstream's `defaultAggregateMaxEvents` / `defaultAggregateIntervalInSeconds`. */
const AGGREGATE_MAX = 10;
const AGGREGATE_WINDOW_MS = 10 * 60_000;
const AGGREGATED_PREFIX = '(combined from similar events): ';
/** Events waiting to be sent, at most (upstream's `maxQueuedEvents`). */
const OUTBOX_MAX = 1000;
/**
 * How long after its emit an event waits for a burst of first syncs, at most: past a
 * 100-pod burst's end on two cores (~3.5 s), so the held events do not land on its tail.
 */
const MAX_YIELD_MS = 10_000;
/**
 * How long after its emit an event waits for one pod's first sync, at most: a cached
 * module's pod posts Running within milliseconds; a slow pull's `Pulling` shows this late.
 */
const ALONE_YIELD_MS = 1000;

/** What the recorder yields to (`PodStarts`); each settles at `deadline` (a `Date.now()` value) at the latest. */
export interface EventYield {
  /** Settles once no burst of pods is in its first sync. */
  quiet(deadline: number): Promise<void>;
  /** Settles once no pod is in its first sync. */
  idle(deadline: number): Promise<void>;
}

/** The object an event is about. */
export type Regarding = Required<Pick<V1ObjectReference, 'kind' | 'namespace' | 'name' | 'uid'>> & { apiVersion?: string; fieldPath?: string };

/** Emits events about objects. */
export interface Events {
  emit(regarding: Regarding, type: 'Normal' | 'Warning', reason: string, note: string, action?: string): void;
  /** Drops what was kept about an object that is gone (its rate limit and aggregation state). */
  forget?(uid: string): void;
}

/** Events that only go to the log (standalone mode). */
export function logEvents(log: Logger): Events {
  return { emit: (r, type, reason, note) => log.info({ object: `${r.namespace}/${r.name}`, type, reason }, note) };
}

let seq = 0n;
/** Upstream's event name: `<object name>.<unix nanoseconds in hex>` (made unique within this process). */
function eventName(objectName: string): string {
  seq = (seq + 1n) % 1000n;
  return `${objectName}.${(BigInt(Date.now()) * 1_000_000n + seq).toString(16)}`;
}

interface Seen {
  /** The created Event's name (undefined if the create failed); set at once, so a burst of identical events makes one. */
  name: Promise<string | undefined>;
  namespace: string;
  count: number;
  last: number;
}

/** Records events through the API. */
export class EventRecorder implements Events {
  private readonly seen = new Map<string, Seen>();
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  /** Distinct notes seen per object+type+reason within the aggregation window. */
  private readonly similar = new Map<string, { notes: Set<string>; last: number }>();
  /** Sends waiting their turn (one in flight). */
  private readonly outbox: { send: () => Promise<void>; at: number }[] = [];
  private sending = false;

  constructor(
    private readonly clients: KubeClients,
    private readonly nodeName: string,
    private readonly log: Logger,
    private readonly yieldTo?: EventYield,
  ) {}

  emit(regarding: Regarding, type: 'Normal' | 'Warning', reason: string, note: string, action = reason): void {
    this.log.info({ object: `${regarding.namespace}/${regarding.name}`, type, reason }, note);
    if (!this.take(regarding.uid)) return;
    const now = Date.now();
    const aggregateKey = `${regarding.uid}\0${regarding.fieldPath ?? ''}\0${type}\0${reason}`;
    let key = `${aggregateKey}\0${note}`;
    let sim = this.similar.get(aggregateKey);
    if (!sim || now - sim.last > AGGREGATE_WINDOW_MS) this.similar.set(aggregateKey, (sim = { notes: new Set(), last: now }));
    sim.last = now;
    sim.notes.add(note);
    if (sim.notes.size >= AGGREGATE_MAX) {
      // The 10th distinct note and later ones: one aggregated series (the note set stays below the maximum).
      sim.notes.delete(note);
      key = `${aggregateKey}\0`;
      note = AGGREGATED_PREFIX + note;
    }
    const prev = this.seen.get(key);
    if (prev && now - prev.last < SERIES_WINDOW_MS) {
      prev.count++;
      prev.last = now;
      const { count, last } = prev;
      this.enqueue(() => this.patchSeries(prev, count, last));
      return;
    }
    const s: Seen = { name: Promise.resolve(undefined), namespace: regarding.namespace, count: 1, last: now };
    this.seen.set(key, s);
    s.name = new Promise<string | undefined>((resolve) => {
      if (!this.enqueue(() => this.create(regarding, type, reason, note, action).then(resolve))) resolve(undefined);
    }).then((name) => {
      if (name === undefined && this.seen.get(key) === s) this.seen.delete(key);
      return name;
    });
  }

  /** Queues one send; false when the outbox is full (the send is dropped). */
  private enqueue(send: () => Promise<void>): boolean {
    if (this.outbox.length >= OUTBOX_MAX) {
      this.log.debug({ waiting: this.outbox.length }, 'event dropped: too many events waiting to be sent');
      return false;
    }
    this.outbox.push({ send, at: Date.now() });
    if (!this.sending) void this.drain();
    return true;
  }

  private async drain(): Promise<void> {
    this.sending = true;
    try {
      // create() and patchSeries() never reject.
      for (let next = this.outbox[0]; next; next = this.outbox[0]) {
        await this.yieldTo?.quiet(next.at + MAX_YIELD_MS);
        await this.yieldTo?.idle(next.at + ALONE_YIELD_MS);
        this.outbox.shift();
        await next.send();
      }
    } finally {
      this.sending = false;
    }
  }

  /** Forgets what was seen for an object (call when a pod is gone). */
  forget(uid: string): void {
    this.buckets.delete(uid);
    for (const k of this.seen.keys()) if (k.startsWith(`${uid}\0`)) this.seen.delete(k);
    for (const k of this.similar.keys()) if (k.startsWith(`${uid}\0`)) this.similar.delete(k);
  }

  private take(uid: string): boolean {
    const now = Date.now();
    const b = this.buckets.get(uid) ?? { tokens: BURST, at: now };
    b.tokens = Math.min(BURST, b.tokens + (now - b.at) / REFILL_MS);
    b.at = now;
    this.buckets.set(uid, b);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  private async create(r: Regarding, type: string, reason: string, note: string, action: string): Promise<string | undefined> {
    const body: EventsV1Event = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: eventName(r.name), namespace: r.namespace },
      eventTime: new MicroTime(),
      type,
      reason,
      note: note.slice(0, 1024),
      action,
      regarding: { apiVersion: r.apiVersion ?? 'v1', kind: r.kind, namespace: r.namespace, name: r.name, uid: r.uid, fieldPath: r.fieldPath },
      reportingController: 'kubelet',
      reportingInstance: this.nodeName,
    };
    try {
      const ev = await this.clients.events.createNamespacedEvent({ namespace: r.namespace, body });
      return ev.metadata?.name ?? body.metadata!.name;
    } catch (e) {
      this.log.warn({ err: apiMessage(e), reason }, 'event not recorded');
      return undefined;
    }
  }

  /** Patches the series of `s` to what it was when queued (`count`, `last`). */
  private async patchSeries(s: Seen, count: number, last: number): Promise<void> {
    const body = { series: { count, lastObservedTime: new MicroTime(last) } };
    const name = await s.name;
    if (name === undefined) return;
    try {
      await this.clients.events.patchNamespacedEvent({ name, namespace: s.namespace, body }, mergePatch);
    } catch (e) {
      this.log.debug({ err: apiMessage(e) }, 'event series not updated');
    }
  }
}

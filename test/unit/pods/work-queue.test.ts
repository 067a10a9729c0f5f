import { afterEach, describe, expect, it, vi } from 'vitest';
import { WorkQueue } from '../../../core/pods/work-queue.ts';

/** A promise with its resolver. */
function gate() {
  let open!: () => void;
  const p = new Promise<void>((r) => {
    open = r;
  });
  return { p, open };
}

/** A handler that records calls and blocks each call until released. */
function blockingHandler() {
  const calls: string[] = [];
  const gates: { key: string; open: () => void }[] = [];
  const active = new Map<string, number>();
  let maxSameKey = 0;
  const handler = async (key: string) => {
    calls.push(key);
    active.set(key, (active.get(key) ?? 0) + 1);
    maxSameKey = Math.max(maxSameKey, active.get(key)!);
    const g = gate();
    gates.push({ key, open: g.open });
    await g.p;
    active.set(key, active.get(key)! - 1);
  };
  return {
    handler,
    calls,
    gates,
    get maxSameKey() {
      return maxSameKey;
    },
    release(key: string) {
      const i = gates.findIndex((g) => g.key === key);
      gates.splice(i, 1)[0]!.open();
    },
  };
}

const flush = () => new Promise((r) => setImmediate(r));

afterEach(() => {
  vi.useRealTimers();
});

describe('WorkQueue', () => {
  it('queues a waiting key once however often it is added', async () => {
    const h = blockingHandler();
    const q = new WorkQueue(h.handler, 1);
    q.add('busy');
    q.add('a');
    q.add('a');
    q.add('a');
    expect(h.calls).toEqual(['busy']);
    h.release('busy');
    await flush();
    expect(h.calls).toEqual(['busy', 'a']);
    h.release('a');
    await q.idle();
    expect(h.calls).toEqual(['busy', 'a']);
  });

  it('never runs the same key twice at once; adds during processing re-queue it once, after', async () => {
    const h = blockingHandler();
    const q = new WorkQueue(h.handler, 8);
    q.add('a');
    q.add('a');
    q.add('a');
    q.add('b');
    await flush();
    expect(h.calls).toEqual(['a', 'b']);
    h.release('a');
    await flush();
    expect(h.calls).toEqual(['a', 'b', 'a']);
    h.release('a');
    h.release('b');
    await q.idle();
    expect(h.calls).toEqual(['a', 'b', 'a']);
    expect(h.maxSameKey).toBe(1);
  });

  it('respects the concurrency limit', async () => {
    const h = blockingHandler();
    const q = new WorkQueue(h.handler, 2);
    for (const k of ['a', 'b', 'c', 'd']) q.add(k);
    expect(h.calls).toEqual(['a', 'b']);
    h.release('b');
    await flush();
    expect(h.calls).toEqual(['a', 'b', 'c']);
    h.release('a');
    h.release('c');
    await flush();
    h.release('d');
    await q.idle();
    expect(h.calls).toEqual(['a', 'b', 'c', 'd']);
  });

  it('keeps working after a handler rejects', async () => {
    const calls: string[] = [];
    const q = new WorkQueue(async (k) => {
      calls.push(k);
      if (k === 'bad') throw new Error('boom');
    }, 1);
    q.add('bad');
    q.add('good');
    await q.idle();
    expect(calls).toEqual(['bad', 'good']);
  });

  it('addAfter delays the add; the earliest pending delay wins', async () => {
    vi.useFakeTimers();
    const calls: string[] = [];
    const q = new WorkQueue(async (k) => {
      calls.push(k);
    }, 1);
    q.addAfter('a', 1000);
    q.addAfter('a', 100);
    q.addAfter('a', 5000);
    await vi.advanceTimersByTimeAsync(99);
    expect(calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toEqual(['a']);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toEqual(['a']);
  });

  it('addAfter with a zero delay adds at once', () => {
    const calls: string[] = [];
    const q = new WorkQueue(async (k) => {
      calls.push(k);
    }, 1);
    q.addAfter('now', 0);
    expect(calls).toEqual(['now']);
  });

  it('shutdown waits for in-flight work, drops queued and delayed keys, and ignores later adds', async () => {
    vi.useFakeTimers();
    const h = blockingHandler();
    const q = new WorkQueue(h.handler, 1);
    q.add('a');
    q.add('queued');
    q.addAfter('later', 50);
    let done = false;
    const stopped = q.shutdown().then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(done).toBe(false);
    h.release('a');
    await stopped;
    expect(done).toBe(true);
    q.add('after');
    await vi.advanceTimersByTimeAsync(100);
    expect(h.calls).toEqual(['a']);
  });

  it('idle resolves at once when nothing is queued', async () => {
    const q = new WorkQueue(async () => undefined);
    await expect(q.idle()).resolves.toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { Backoff } from '../../../core/backoff/index.ts';

function clock(start = 1_000_000) {
  const c = { t: start, now: () => c.t };
  return c;
}

describe('Backoff', () => {
  it('starts at 10 s and doubles to a 300 s cap by default', () => {
    const c = clock();
    const b = new Backoff(undefined, undefined, c.now);
    const seen: number[] = [];
    for (let i = 0; i < 8; i++) {
      seen.push(b.next('k'));
      c.t += 1000;
    }
    expect(seen).toEqual([10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000]);
    expect(b.delay('k')).toBe(300_000);
  });

  it('keeps keys independent', () => {
    const c = clock();
    const b = new Backoff(100, 1000, c.now);
    b.next('a');
    b.next('a');
    expect(b.next('b')).toBe(100);
    expect(b.delay('a')).toBe(200);
  });

  it('starts again from the initial delay when the entry was untouched for more than 2 × max', () => {
    const c = clock();
    const b = new Backoff(100, 1000, c.now);
    b.next('k');
    b.next('k');
    b.next('k');
    expect(b.delay('k')).toBe(400);
    c.t += 2000; // exactly 2 × max: not yet expired
    expect(b.next('k')).toBe(800);
    c.t += 2001;
    expect(b.next('k')).toBe(100);
  });

  it('uses the event time given to next() rather than the clock', () => {
    const c = clock();
    const b = new Backoff(100, 1000, c.now);
    b.next('k', 0);
    expect(b.next('k', 2001)).toBe(100);
  });

  it('reports the time left since an event, and 0 once the delay passed', () => {
    const c = clock();
    const b = new Backoff(100, 1000, c.now);
    const failedAt = c.t;
    b.next('k');
    expect(b.remaining('k', failedAt)).toBe(100);
    c.t += 60;
    expect(b.remaining('k', failedAt)).toBe(40);
    c.t += 40;
    expect(b.remaining('k', failedAt)).toBe(0);
    expect(b.remaining('unknown', failedAt)).toBe(0);
  });

  it('reports no back-off for an expired entry', () => {
    const c = clock();
    const b = new Backoff(100, 1000, c.now);
    b.next('k');
    c.t += 2001;
    expect(b.remaining('k', c.t)).toBe(0);
  });

  it('forgets a key, or every key with a prefix', () => {
    const c = clock();
    const b = new Backoff(100, 1000, c.now);
    for (const k of ['uid1/a', 'uid1/b', 'uid2/a']) {
      b.next(k);
      b.next(k);
    }
    b.resetPrefix('uid1/');
    expect([b.delay('uid1/a'), b.delay('uid1/b'), b.delay('uid2/a')]).toEqual([0, 0, 200]);
    b.reset('uid2/a');
    expect(b.next('uid2/a')).toBe(100);
  });
});

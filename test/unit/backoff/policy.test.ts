import { describe, expect, it } from 'vitest';
import { Backoff, delaySequence, retry, withJitter } from '../../../core/backoff/index.ts';
import { ROTATION_RETRY_MS } from '../../../core/certificates/cert-manager.ts';
import { UPDATE_BACKOFF } from '../../../core/volumes/csi/node-info-manager.ts';
import { INITIAL_BACKOFF_MS, MAX_BACKOFF_MS } from '../../../core/pluginmanager/operation-map.ts';

describe('back-off policy: upstream variants as parameters', () => {
  it('flowcontrol.Backoff (restarts, pulls): 10 s doubling to 300 s', () => {
    expect(delaySequence({ initialMs: 10_000, maxMs: 300_000 }, 7)).toEqual([10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
  });

  it('exponentialbackoff (plugin operations, volume set-up): 500 ms doubling to 2 min 2 s', () => {
    const seq = delaySequence({ initialMs: INITIAL_BACKOFF_MS, maxMs: MAX_BACKOFF_MS }, 10);
    expect(seq).toEqual([500, 1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 122_000, 122_000]);
  });

  it('node lease: 100 ms doubling to 7 s, again from 100 ms after a success', () => {
    const b = new Backoff(100, 7000, () => 0, { resetAfterMs: Infinity });
    const seq = Array.from({ length: 8 }, () => b.next('lease'));
    expect(seq).toEqual([100, 200, 400, 800, 1600, 3200, 6400, 7000]);
    b.reset('lease');
    expect(b.next('lease')).toBe(100);
  });

  it('no reset-after keeps the delay however long the key was idle', () => {
    let t = 0;
    const b = new Backoff(100, 7000, () => t, { resetAfterMs: Infinity });
    b.next('k');
    b.next('k');
    t += 1e9;
    expect(b.next('k')).toBe(400);
  });

  it('wait.Backoff of CSINode updates: 4 tries, 10 ms ×5, 10 % jitter', () => {
    expect(delaySequence(UPDATE_BACKOFF, UPDATE_BACKOFF.steps - 1)).toEqual([10, 50, 250]);
    expect(withJitter(UPDATE_BACKOFF, 250, () => 1)).toBeCloseTo(275);
    expect(withJitter(UPDATE_BACKOFF, 250, () => 0)).toBe(250);
  });

  it('certificate rotation: 2 s doubling for 4 waits', () => {
    expect(ROTATION_RETRY_MS).toEqual([2000, 4000, 8000, 16_000]);
  });

  it('a factor other than 2 and no cap', () => {
    expect(delaySequence({ initialMs: 1, factor: 3 }, 5)).toEqual([1, 3, 9, 27, 81]);
  });

  it('retry gives up after `steps` tries with the errors aggregated', async () => {
    let n = 0;
    const err = await retry({ steps: 3, initialMs: 0 }, 'op', async () => {
      n++;
      throw new Error('boom');
    }).catch((e: Error) => e);
    expect(n).toBe(3);
    expect(err).toMatchObject({ code: 'NDL_RETRY_EXHAUSTED', detail: 'op: timed out waiting for the condition; caused by: boom' });
  });
});

import { describe, expect, it } from 'vitest';
import { INITIAL_BACKOFF_MS, MAX_BACKOFF_MS, OperationMap } from '../../../core/pluginmanager/operation-map.ts';

describe('OperationMap', () => {
  it('runs one operation per key; a second is reported pending, not started', async () => {
    const ops = new OperationMap();
    let release!: () => void;
    const first = ops.run('a', () => new Promise<void>((r) => (release = r)));
    expect(first.started).toBe(true);
    expect(ops.run('a', async () => {})).toEqual({ started: false, reason: 'pending' });
    expect(ops.run('b', async () => {}).started).toBe(true);
    release();
    await ops.idle();
    expect(ops.isPending('a')).toBe(false);
  });

  it('backs off after failures: 500 ms doubling to 2 min 2 s, cleared by a success', async () => {
    let now = 1_000_000;
    const errors: number[] = [];
    const ops = new OperationMap({ now: () => now, onError: (_k, _e, ms) => errors.push(ms) });
    const fail = async (): Promise<void> => {
      throw new Error('nope');
    };
    expect(ops.run('s', fail).started).toBe(true);
    await ops.idle();
    expect(ops.backoffMs('s')).toBe(INITIAL_BACKOFF_MS);
    const blocked = ops.run('s', fail);
    expect(blocked).toMatchObject({ started: false, reason: 'backoff', retryAt: now + INITIAL_BACKOFF_MS });
    for (let i = 0; i < 12; i++) {
      now += ops.backoffMs('s') + 1;
      expect(ops.run('s', fail).started).toBe(true);
      await ops.idle();
    }
    expect(errors.slice(0, 5)).toEqual([500, 1000, 2000, 4000, 8000]);
    expect(ops.backoffMs('s')).toBe(MAX_BACKOFF_MS);
    now += MAX_BACKOFF_MS + 1;
    expect(ops.run('s', async () => {}).started).toBe(true);
    await ops.idle();
    expect(ops.backoffMs('s')).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { SingleFlight } from '../../../core/images/single-flight.ts';

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('SingleFlight', () => {
  it('runs once for concurrent callers and forgets the key afterwards', async () => {
    const sf = new SingleFlight<number>();
    let runs = 0;
    const gate = deferred<number>();
    const a = sf.do('k', () => (runs++, gate.promise));
    const b = sf.do('k', () => (runs++, gate.promise));
    gate.resolve(7);
    expect(await Promise.all([a, b])).toEqual([7, 7]);
    expect(runs).toBe(1);
    expect(sf.size).toBe(0);
    expect(await sf.do('k', async () => 8)).toBe(8);
  });

  it('aborts the operation only when every waiter has aborted', async () => {
    const sf = new SingleFlight<string>();
    let opSignal!: AbortSignal;
    const gate = deferred<string>();
    const c1 = new AbortController();
    const c2 = new AbortController();
    const a = sf.do('k', (s) => ((opSignal = s), gate.promise), c1.signal);
    const b = sf.do('k', () => gate.promise, c2.signal);
    await Promise.resolve();
    c1.abort();
    await expect(a).rejects.toThrow(/abort/i);
    expect(opSignal.aborted).toBe(false);
    c2.abort();
    expect(opSignal.aborted).toBe(true);
    await expect(b).rejects.toThrow(/abort/i);
    gate.resolve('late');
  });

  it('rejects at once for an already aborted signal', async () => {
    const sf = new SingleFlight<number>();
    let ran = false;
    await expect(sf.do('k', async () => ((ran = true), 1), AbortSignal.abort())).rejects.toThrow();
    expect(ran).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { crashLoopBackoff } from '../../../core/backoff/index.ts';

/** The delays of `n` crashes one second apart. */
function delays(maxMs: number | undefined, n: number): number[] {
  let t = 1_000_000;
  const b = crashLoopBackoff({ maxMs, now: () => t });
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    out.push(b.next('pod/c'));
    t += 1000;
  }
  return out;
}

// Upstream pkg/kubelet/kubelet.go newCrashLoopBackOff with KubeletCrashLoopBackOffMax (beta, on) and
// ReduceDefaultCrashLoopBackOffDecay off (its default).
describe('crashLoopBackoff', () => {
  // kubelet_test.go TestCrashLoopBackOffConfiguration, the cases without ReduceDefaultCrashLoopBackOffDecay.
  it.each([
    ['Faster per node config; only node config configured', 2_000, 2_000],
    ['Slower per node config; only node config configured, set A', 11_000, 10_000],
    ['Slower per node config; only node config configured, set B', 300_000, 10_000],
  ])('%s: max %d ms → initial %d ms', (_name, maxMs, initialMs) => {
    const [first, second] = delays(maxMs, 2);
    expect(first).toBe(initialMs);
    expect(second).toBe(Math.min(2 * initialMs, maxMs));
  });

  it('default: 10 s doubling to 300 s', () => {
    expect(delays(undefined, 7)).toEqual([10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
  });

  it('a max above 10 s caps the doubling', () => {
    expect(delays(30_000, 5)).toEqual([10_000, 20_000, 30_000, 30_000, 30_000]);
  });

  it('a max below 10 s is also the first delay', () => {
    expect(delays(2_000, 4)).toEqual([2_000, 2_000, 2_000, 2_000]);
    expect(delays(1_000, 2)).toEqual([1_000, 1_000]);
  });

  it('forgets a container after 600 s without a crash, whatever the max', () => {
    let t = 0;
    const b = crashLoopBackoff({ maxMs: 2_000, now: () => t });
    b.next('k');
    b.next('k');
    t += 600_000;
    expect(b.remaining('k', t - 1000)).toBe(1000);
    t += 1;
    expect(b.remaining('k', t - 1000)).toBe(0);
  });
});

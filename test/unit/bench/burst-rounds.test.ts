import { describe, expect, it } from 'vitest';
import { cpuBetween, cpuCell, medianRound, type BurstRound } from '../../../bench/figures/latency.ts';

const round = (p99: number, p50 = p99 / 2): BurstRound => ({
  n: 100,
  headline: { n: 100, p50, p90: p99 - 1, p99, max: p99 + 1 },
  sig: { n: 100, p50, p90: p99, p99, max: p99 },
  fromBound: { n: 100, p50: p50 / 2, p90: p99 / 2, p99: p99 / 2, max: p99 / 2 },
  allRunningMs: p99 + 5,
});

describe('the burst round the nodes are compared by', () => {
  it('is the round with the median p99, whole (its p50 and p90 are that round’s own)', () => {
    const rounds = [round(1900, 700), round(1200, 600), round(1500, 650)];
    expect(medianRound(rounds)).toBe(rounds[2]);
    expect(medianRound(rounds).headline.p50).toBe(650);
  });

  it('is the lower middle round of an even count, and the only round of one', () => {
    const rounds = [round(1400), round(900), round(2000), round(1100)];
    expect(medianRound(rounds)).toBe(rounds[3]);
    expect(medianRound([rounds[0]!])).toBe(rounds[0]);
  });

  it('does not reorder the rounds it is given', () => {
    const rounds = [round(3), round(1), round(2)];
    medianRound(rounds);
    expect(rounds.map((r) => r.headline.p99)).toEqual([3, 1, 2]);
  });

  it('is an error for no rounds', () => {
    expect(() => medianRound([])).toThrow('no burst rounds');
  });
});

describe('the CPU of a burst round', () => {
  it('is each process’s CPU seconds between the two probes, rounded to 0.01 s', () => {
    const before = { nodelet: 10.5, 'kube-apiserver': 100.25, etcd: 7 };
    const after = { nodelet: 11.42, 'kube-apiserver': 102.304, etcd: 7.4 };
    expect(cpuBetween(before, after)).toEqual({ nodelet: 0.92, 'kube-apiserver': 2.05, etcd: 0.4 });
  });

  it('leaves out a process only one probe saw', () => {
    expect(cpuBetween({ kwok: 1 }, { kwok: 1.5, etcd: 3 })).toEqual({ kwok: 0.5 });
  });

  it('is printed per process, summed, and as the cores the sum kept busy over the window', () => {
    expect(cpuCell({ windowMs: 2000, seconds: { nodelet: 0.9, 'kube-apiserver': 2.1, etcd: 0.5 } })).toBe(
      'nodelet 0.90, kube-apiserver 2.10, etcd 0.50; 3.50 s of CPU in 2.00 s (1.75 cores)',
    );
  });
});

/** The probe worker's state machine with a scripted check and fake timers: thresholds, initial delay, gating, hold after a liveness failure, timeouts. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ProbeWorker, type ProbeResult } from '../../../core/probes/probe-worker.ts';
import { probeSettings } from '../../../core/probes/probe-settings.ts';
import type { CheckOutcome, CheckResult, ProbeKind } from '../../../core/probes/probe-types.ts';

/** A worker whose check answers from `script` (the last answer repeats), with everything it reports recorded. */
function harness(kind: ProbeKind, probe: Record<string, number>, script: CheckResult[], gate?: () => boolean) {
  const results: ProbeResult[] = [];
  const events: string[] = [];
  const observed: CheckResult[] = [];
  let i = 0;
  const w = new ProbeWorker({
    kind,
    settings: probeSettings(kind, { ...probe }),
    startedAt: new Date(Date.now()),
    check: async (): Promise<CheckOutcome> => {
      const r = script[Math.min(i++, script.length - 1)]!;
      return { result: r, output: r === 'failure' ? 'HTTP probe failed with statuscode: 503' : '' };
    },
    gate,
    onResult: (r) => results.push(r),
    observed: (r) => observed.push(r),
    event: (reason, message) => events.push(`${reason}: ${message}`),
  });
  return { w, results, events, observed, checks: () => i };
}

describe('ProbeWorker', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('starts with upstream initial results: readiness failure, liveness success, startup unknown', () => {
    expect(harness('Readiness', {}, ['success']).w.result).toBe('failure');
    expect(harness('Liveness', {}, ['success']).w.result).toBe('success');
    expect(harness('Startup', {}, ['success']).w.result).toBe('unknown');
  });

  it('readiness becomes success after successThreshold checks in a row and failure after failureThreshold', async () => {
    const h = harness('Readiness', { periodSeconds: 1, successThreshold: 2, failureThreshold: 3 }, [
      'success',
      'success',
      'failure',
      'failure',
      'success',
      'failure',
      'failure',
      'failure',
    ]);
    h.w.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(h.w.result).toBe('failure'); // one success is not two
    await vi.advanceTimersByTimeAsync(1000);
    expect(h.w.result).toBe('success');
    await vi.advanceTimersByTimeAsync(3000); // failure, failure, success: the run of failures broke
    expect(h.w.result).toBe('success');
    await vi.advanceTimersByTimeAsync(3000); // three failures in a row
    expect(h.w.result).toBe('failure');
    expect(h.results).toEqual(['success', 'failure']);
    expect(h.events.filter((e) => e.startsWith('Unhealthy: Readiness probe failed: HTTP probe failed with statuscode: 503'))).toHaveLength(5);
    expect(h.observed).toHaveLength(8);
    h.w.stop();
  });

  it('waits initialDelaySeconds before the first check', async () => {
    const h = harness('Readiness', { initialDelaySeconds: 5, periodSeconds: 1 }, ['success']);
    h.w.start();
    await vi.advanceTimersByTimeAsync(4999);
    expect(h.checks()).toBe(0);
    expect(h.w.result).toBe('failure');
    await vi.advanceTimersByTimeAsync(1);
    expect(h.checks()).toBe(1);
    expect(h.w.result).toBe('success');
    h.w.stop();
  });

  it('a gated worker does not check until the gate opens, then checks at once on wake()', async () => {
    let open = false;
    const h = harness('Liveness', { periodSeconds: 10 }, ['failure'], () => open);
    h.w.start();
    await vi.advanceTimersByTimeAsync(35_000);
    expect(h.checks()).toBe(0);
    open = true;
    h.w.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(h.checks()).toBe(1);
    h.w.stop();
  });

  it('liveness: failureThreshold failures publish failure once and put the worker on hold (no more checks)', async () => {
    const h = harness('Liveness', { periodSeconds: 1, failureThreshold: 3 }, ['success', 'failure']);
    h.w.start();
    await vi.advanceTimersByTimeAsync(2000);
    expect(h.w.result).toBe('success');
    expect(h.results).toEqual([]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(h.w.result).toBe('failure');
    expect(h.results).toEqual(['failure']);
    const n = h.checks();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(h.checks()).toBe(n);
    expect(h.events).toEqual(['Unhealthy: Liveness probe failed: HTTP probe failed with statuscode: 503', expect.any(String), expect.any(String)]);
  });

  it('startup: success ends the worker; successThreshold is forced to 1 for liveness and startup', async () => {
    const h = harness('Startup', { periodSeconds: 1, successThreshold: 5 }, ['failure', 'success', 'failure']);
    h.w.start();
    await vi.advanceTimersByTimeAsync(1000);
    expect(h.w.result).toBe('success');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(h.checks()).toBe(2);
    expect(h.results).toEqual(['success']);
  });

  it('unknown results are ignored and a warning counts as a success with a ProbeWarning event', async () => {
    const h = harness('Readiness', { periodSeconds: 1 }, ['unknown', 'warning']);
    h.w.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(h.w.result).toBe('failure');
    await vi.advanceTimersByTimeAsync(1000);
    expect(h.w.result).toBe('success');
    expect(h.events[0]).toMatch(/^ProbeWarning: Readiness probe warning: /);
    expect(h.observed.slice(0, 2)).toEqual(['unknown', 'warning']);
    h.w.stop();
  });

  it('stop() ends checking', async () => {
    const h = harness('Readiness', { periodSeconds: 1 }, ['success']);
    h.w.start();
    await vi.advanceTimersByTimeAsync(0);
    h.w.stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(h.checks()).toBe(1);
  });
});

describe('probeSettings', () => {
  it("applies upstream's defaults", () => {
    expect(probeSettings('Readiness', {})).toEqual({ initialDelayMs: 0, periodMs: 10_000, timeoutMs: 1000, successThreshold: 1, failureThreshold: 3 });
    expect(probeSettings('Liveness', { terminationGracePeriodSeconds: 4, timeoutSeconds: 2 })).toMatchObject({ timeoutMs: 2000, terminationGraceMs: 4000 });
    expect(probeSettings('Readiness', { terminationGracePeriodSeconds: 4 }).terminationGraceMs).toBeUndefined();
  });
});

describe('ProbeWorker period', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('checks every period from the start of the previous check (a ticker), not from its end', async () => {
    const starts: number[] = [];
    const w = new ProbeWorker({
      kind: 'Readiness',
      settings: probeSettings('Readiness', { periodSeconds: 1 }),
      startedAt: new Date(Date.now()),
      check: async () => {
        starts.push(Date.now());
        await new Promise((r) => setTimeout(r, 300)); // a slow check: 300 ms of fake time, the ticker's period is what is tested
        return { result: 'success', output: '' };
      },
      onResult: () => undefined,
      observed: () => undefined,
      event: () => undefined,
    });
    const t0 = Date.now();
    w.start();
    await vi.advanceTimersByTimeAsync(3000);
    w.stop();
    expect(starts.map((t) => t - t0)).toEqual([0, 1000, 2000, 3000]);
  });
});

import { describe, expect, it, vi } from 'vitest';
import type { PodLifecycle, PodProvider, PodStatusReport } from '@nodelet/plugin-api/v1';
import { ProviderReports, STATUS_ANSWER_MS } from '../../../core/pods/provider-reports.ts';
import { VM_PROVIDER, memoryLogger } from './fakes.ts';

const REF = { namespace: 'default', name: 'p', uid: '11111111-1111-1111-1111-111111111111' };
const running: PodStatusReport = {
  phase: 'Running',
  containers: [{ name: 'main', state: { running: { startedAt: new Date(0) } }, ready: true, restartCount: 0 }],
};

function reports(getPodStatus: PodLifecycle['getPodStatus']) {
  const provider: PodProvider = { ...VM_PROVIDER, pods: { createPod: async () => undefined, deletePod: async () => undefined, getPodStatus } };
  const events: string[] = [];
  let changed = 0;
  const r = new ProviderReports({
    provider,
    event: (_type, reason, note) => events.push(`${reason}: ${note}`),
    log: () => memoryLogger(),
    terminating: () => false,
    statusChanged: () => changed++,
  });
  return { r, events, changed: () => changed };
}

describe('ProviderReports: what a pod provider reported', () => {
  it('takes a synchronous report at once', () => {
    const { r, changed } = reports(() => running);
    expect(r.read(REF)?.phase).toBe('Running');
    expect(changed()).toBe(0);
  });

  it('waits for a thenable that is not a native promise (a provider with its own promise library), and asks for a sync once it answers', async () => {
    let calls = 0;
    let answer!: (v: PodStatusReport) => void;
    const thenable = { then: (ok: (v: PodStatusReport) => unknown) => void (answer = (v) => void ok(v)) };
    const { r, events, changed } = reports(() => {
      calls++;
      return thenable as unknown as Promise<PodStatusReport>;
    });
    expect(r.read(REF)).toBeUndefined();
    expect(r.read(REF)).toBeUndefined();
    expect(calls).toBe(1);
    await vi.waitFor(() => expect(answer).toBeTypeOf('function'));
    answer(running);
    await vi.waitFor(() => expect(changed()).toBe(1));
    expect(r.last?.phase).toBe('Running');
    expect(events).toEqual([]);
  });

  it('a rejected answer keeps the last good report and is shown once as ProviderStatusInvalid', async () => {
    let fail = false;
    const { r, events, changed } = reports(() => (fail ? Promise.reject(new Error('agent gone')) : Promise.resolve(running)));
    r.read(REF);
    await vi.waitFor(() => expect(r.last?.phase).toBe('Running'));
    fail = true;
    expect(r.read(REF)?.phase).toBe('Running');
    await vi.waitFor(() => expect(events).toEqual(['ProviderStatusInvalid: provider "vm": getPodStatus failed: agent gone']));
    expect(r.read(REF)?.phase).toBe('Running');
    await new Promise((res) => setImmediate(res));
    expect(events).toHaveLength(1);
    expect(changed()).toBe(1);
  });

  it('gives up on an answer that never comes after STATUS_ANSWER_MS (one Warning), calls again, and ignores the late answer', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      let calls = 0;
      const late: Array<(v: PodStatusReport) => void> = [];
      const { r, events } = reports(() => {
        calls++;
        return new Promise<PodStatusReport>((ok) => late.push(ok));
      });
      r.read(REF);
      vi.advanceTimersByTime(STATUS_ANSWER_MS - 1);
      r.read(REF);
      expect(calls).toBe(1);
      vi.advanceTimersByTime(1);
      r.read(REF);
      expect(calls).toBe(2);
      expect(events).toEqual([`ProviderStatusInvalid: provider "vm": getPodStatus did not answer within ${STATUS_ANSWER_MS / 1000}s`]);
      late[0]!(running); // the abandoned call answers at last: ignored
      await Promise.resolve();
      await Promise.resolve();
      expect(r.last).toBeUndefined();
      late[1]!(running); // the current one is taken
      await vi.waitFor(() => expect(r.last?.phase).toBe('Running'));
    } finally {
      vi.useRealTimers();
    }
  });
});

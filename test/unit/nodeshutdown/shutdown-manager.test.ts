import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { NodeShutdownManager, type NodeShutdownOptions } from '../../../core/nodeshutdown/shutdown-manager.ts';
import type { AbnormalTermination } from '../../../core/pods/index.ts';
import { FakeEvents, memoryLogger } from '../pods/fakes.ts';

afterEach(() => {
  vi.useRealTimers();
});

const pod = (name: string, priority?: number, grace?: number): V1Pod => ({
  metadata: { name, namespace: 'default', uid: `uid-${name}` },
  spec: { containers: [], priority, terminationGracePeriodSeconds: grace },
});

/** `postStatus`: the node status post a shutdown awaits (default: records the NotReady reasons it would post). */
function make(pods: V1Pod[], over: Partial<NodeShutdownOptions> = {}, postStatus?: () => Promise<void>) {
  const order: string[] = [];
  const terminations: { name: string; t: AbnormalTermination }[] = [];
  const finish = new Map<string, () => void>();
  const signals = new EventEmitter();
  const events = new FakeEvents();
  const logs: string[] = [];
  const mgr: NodeShutdownManager = new NodeShutdownManager({
    nodeName: 'node-a',
    gracePeriodMs: 30_000,
    criticalPodsMs: 10_000,
    log: memoryLogger(logs),
    events,
    activePods: () => pods,
    terminate: (p, t) => {
      order.push(`stop ${p.metadata!.name}`);
      terminations.push({ name: p.metadata!.name!, t });
      return new Promise<void>((r) => finish.set(p.metadata!.name!, r));
    },
    signals: signals as unknown as NodeShutdownOptions['signals'],
    ...over,
  });
  mgr.onShutdownStarting(
    postStatus ??
      (async () => {
        order.push(`status ${mgr.notReadyReasons().join(',') || 'ready'}`);
      }),
  );
  return { mgr, order, terminations, finish, signals, events, logs };
}

describe('NodeShutdownManager', () => {
  it('on SIGPWR: NotReady first, then regular pods, then critical pods once the regular ones stopped; upstream reason, message, condition', async () => {
    const m = make([pod('critical', 2_000_000_000), pod('web'), pod('quick', 0, 3)]);
    m.mgr.start();
    expect(m.mgr.admitHandler().admit(pod('new'), undefined as never)).toEqual({ admit: true });
    m.signals.emit('SIGPWR');
    await vi.waitFor(() => expect(m.order).toEqual(['status node is shutting down', 'stop web', 'stop quick']));
    expect(m.mgr.notReadyReasons()).toEqual(['node is shutting down']);
    expect(m.mgr.admitHandler().admit(pod('new'), undefined as never)).toEqual({
      admit: false,
      reason: 'NodeShutdown',
      message: 'Pod was rejected as the node is shutting down.',
    });
    expect(m.events.lines()).toEqual(['NodeShutdown: Shutdown manager detected shutdown event']);
    const msg = 'Pod was terminated in response to imminent node shutdown.';
    expect(m.terminations[0]!.t).toEqual({
      graceMs: 20_000,
      reason: 'Terminated',
      message: msg,
      conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message: msg }],
    });
    expect(m.terminations[1]!.t.graceMs).toBe(3000);
    m.finish.get('web')!();
    m.finish.get('quick')!();
    await vi.waitFor(() => expect(m.order.at(-1)).toBe('stop critical'));
    expect(m.terminations[2]!.t.graceMs).toBe(10_000);
    const done = m.mgr.shutdown('again');
    m.finish.get('critical')!();
    await done;
    expect(m.order.filter((o) => o.startsWith('stop'))).toHaveLength(3);
    expect(m.logs.join('\n')).toContain('completed processing shutdown event');
    m.mgr.stop();
    expect(m.signals.listenerCount('SIGPWR')).toBe(0);
  });

  it('moves on to critical pods when the regular budget runs out', async () => {
    vi.useFakeTimers();
    const m = make([pod('stuck'), pod('critical', 2_000_000_001)]);
    const done = m.mgr.shutdown('test');
    await vi.advanceTimersByTimeAsync(19_999);
    expect(m.order).toEqual(['status node is shutting down', 'stop stuck']);
    await vi.advanceTimersByTimeAsync(1);
    expect(m.order.at(-1)).toBe('stop critical');
    await vi.advanceTimersByTimeAsync(10_000);
    await done;
    expect(m.logs.join('\n')).toContain('pod killing time out');
  });

  it('does not wait more than a second for the NotReady post (apiserver down)', async () => {
    vi.useFakeTimers();
    const m = make([pod('web')], {}, () => new Promise(() => undefined));
    void m.mgr.shutdown('test');
    await vi.advanceTimersByTimeAsync(999);
    expect(m.order).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(m.order).toEqual(['stop web']);
  });

  it('is off with a zero grace period: no signal handler, shutdown() does nothing', async () => {
    const m = make([pod('web')], { gracePeriodMs: 0, criticalPodsMs: 0 });
    m.mgr.start();
    expect(m.signals.listenerCount('SIGPWR')).toBe(0);
    await m.mgr.shutdown('test');
    expect(m.order).toEqual([]);
    expect(m.mgr.notReadyReasons()).toEqual([]);
  });
});

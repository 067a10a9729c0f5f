import { describe, expect, it } from 'vitest';
import { isProviderError } from '../v1/index.ts';
import { complete, createBackoff, defineState, next, podStates, runStateMachine, type PodMachineContext, type State, type StateStatus } from '../v1/toolkit.ts';

type Ctx = { log: string[] };
const s = (name: string, transitions: string[], go: (c: Ctx) => State<Ctx> | undefined): State<Ctx> =>
  defineState<Ctx>({
    name,
    transitions,
    status: () => ({ phase: 'Pending', reason: name }),
    next: (c) => {
      c.log.push(name);
      const t = go(c);
      return t ? next(t) : complete();
    },
  });

describe('runStateMachine', () => {
  it('follows declared transitions, reports each status and completes', async () => {
    const statuses: StateStatus[] = [];
    const c = s('C', [], () => undefined);
    const b = s('B', ['C'], () => c);
    const a = s('A', ['B'], () => b);
    const r = await runStateMachine(a, { log: [] }, new AbortController().signal, { onStatus: (st) => statuses.push(st) });
    expect(r.path).toEqual(['A', 'B', 'C']);
    expect(r.error).toBeUndefined();
    expect(statuses.map((x) => x.reason)).toEqual(['A', 'B', 'C']);
  });

  it('stops with a branded UndeclaredTransition error naming both states and the allowed ones', async () => {
    const c = s('C', [], () => undefined);
    const a = s('A', ['B'], () => c);
    const r = await runStateMachine(a, { log: [] }, new AbortController().signal);
    expect(isProviderError(r.error)).toBe(true);
    expect((r.error as { reason: string }).reason).toBe('UndeclaredTransition');
    expect((r.error as Error).message).toBe('undeclared state transition A → C (A may move to: B)');
    expect(r.final.name).toBe('A');
  });

  it('moves to the onAbort state when the signal aborts, and refuses an undeclared one', async () => {
    const ac = new AbortController();
    const end = s('Terminated', [], () => undefined);
    const loop: State<Ctx> = defineState<Ctx>({
      name: 'Loop',
      transitions: ['Loop', 'Terminated'],
      status: () => ({ phase: 'Running' }),
      next: (c) => {
        if (c.log.push('Loop') === 3) ac.abort();
        return next(loop);
      },
    });
    const r = await runStateMachine(loop, { log: [] }, ac.signal, { onAbort: () => end });
    expect(r.aborted).toBe(true);
    expect(r.path.slice(-2)).toEqual(['Loop', 'Terminated']);
    const ac2 = new AbortController();
    ac2.abort();
    const r2 = await runStateMachine(
      s('X', [], () => undefined),
      { log: [] },
      ac2.signal,
      { onAbort: () => end },
    );
    expect((r2.error as Error).message).toMatch(/X → Terminated/);
  });

  it('reports a throwing state as the error and rejects bad declarations', async () => {
    const boom = defineState<Ctx>({
      name: 'Boom',
      transitions: [],
      status: () => ({ phase: 'Pending' }),
      next: () => {
        throw new Error('kaput');
      },
    });
    expect(((await runStateMachine(boom, { log: [] }, new AbortController().signal)).error as Error).message).toBe('kaput');
    expect(() => defineState<Ctx>({ name: '', transitions: [], status: () => ({ phase: 'Pending' }), next: () => complete() })).toThrow(/non-empty name/);
  });
});

function podCtx(over: Partial<PodMachineContext> & { exits?: number[] }): PodMachineContext & { calls: string[] } {
  const calls: string[] = [];
  const exits = over.exits ?? [0];
  return {
    restartPolicy: 'Never',
    calls,
    pullImages: async () => {
      calls.push('pull');
    },
    start: async () => {
      calls.push('start');
    },
    wait: async () => ({ exitCode: exits.shift() ?? 0 }),
    stop: async () => {
      calls.push('stop');
    },
    backoff: async (k) => {
      calls.push(`backoff:${k}`);
    },
    resetBackoff: () => undefined,
    ...over,
  };
}

describe('common pod states', () => {
  const run = (c: PodMachineContext, signal = new AbortController().signal) => {
    const st = podStates();
    return runStateMachine(st.Registered(), c, signal, { onAbort: () => st.Terminated() });
  };

  it('runs a pod to Completed (Succeeded)', async () => {
    const r = await run(podCtx({}));
    expect(r.path).toEqual(['Registered', 'ImagePull', 'VolumeMount', 'Initializing', 'Starting', 'Running', 'Completed']);
    expect(r.status).toEqual({ phase: 'Succeeded', reason: 'Completed' });
  });

  it('backs off a failed pull, then retries it', async () => {
    let n = 0;
    const c = podCtx({
      pullImages: async () => {
        if (n++ === 0) throw new Error('manifest unknown');
      },
    });
    const statuses: StateStatus[] = [];
    const st = podStates();
    await runStateMachine(st.Registered(), c, new AbortController().signal, { onStatus: (x) => statuses.push(x) });
    expect(statuses).toContainEqual({ phase: 'Pending', reason: 'ImagePullBackOff', message: 'manifest unknown' });
    expect(c.calls).toContain('backoff:ImagePull');
  });

  it('restarts a failing pod through CrashLoopBackOff under OnFailure and fails it under Never', async () => {
    const c = podCtx({ restartPolicy: 'OnFailure', exits: [1, 0] });
    const r = await run(c);
    expect(r.path).toContain('CrashLoopBackOff');
    expect(r.status.phase).toBe('Succeeded');
    const r2 = await run(podCtx({ exits: [3] }));
    expect(r2.status).toEqual({ phase: 'Failed', reason: 'Error', message: 'exited with code 3' });
  });

  it('turns a validation failure into Error and lets a provider replace one state', async () => {
    const r = await run(
      podCtx({
        validate: () => {
          throw new Error('no containers');
        },
      }),
    );
    expect(r.status.message).toBe('no containers');
    const st = podStates<PodMachineContext>({
      Starting: (t) => () =>
        defineState({ name: 'Starting', transitions: ['Completed'], status: () => ({ phase: 'Pending' }), next: () => next(t.Completed()) }),
    });
    const r2 = await runStateMachine(st.Registered(), podCtx({}), new AbortController().signal);
    expect(r2.path.slice(-2)).toEqual(['Starting', 'Completed']);
  });

  it('stops the pod in Terminated when deleted while running', async () => {
    const ac = new AbortController();
    const c = podCtx({
      wait: (sig) => {
        ac.abort();
        return new Promise((res) => {
          if (sig.aborted) res({ exitCode: 137 });
        });
      },
    });
    const p = run(c, ac.signal);
    const r = await p;
    expect(r.final.name).toBe('Terminated');
    expect(c.calls).toContain('stop');
  });

  it('doubles the back-off up to the maximum and resets it', async () => {
    const b = createBackoff({ initialMs: 1, maxMs: 3 });
    const sig = new AbortController().signal;
    await b.backoff('CrashLoop', sig);
    await b.backoff('CrashLoop', sig);
    await b.backoff('CrashLoop', sig);
    expect(b.delay('CrashLoop')).toBe(3);
    b.resetBackoff('CrashLoop');
    expect(b.delay('CrashLoop')).toBe(0);
  });
});

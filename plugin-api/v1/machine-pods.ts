/**
 * Turns a pod state machine into a `PodLifecycle`: each created pod runs
 * its machine in the background; the latest state's status is what
 * `getPodStatus` reports; `deletePod` aborts the machine (which moves to its
 * `onAbort` state, usually `Terminated`) and waits for it to finish.
 */
import type { PodRef } from './capabilities.ts';
import type { PodLifecycle, PodLifecycleContext, PodObject, PodStatusReport } from './pod-lifecycle.ts';
import { runStateMachine, type RunResult, type State } from './state-machine.ts';

/** What the provider builds for each new pod. */
export interface PodMachine<C> {
  /** The first state (e.g. `states.Registered()`). */
  readonly initial: State<C>;
  /** The context the states work on. */
  readonly context: C;
  /** The state to move to when the pod is deleted (e.g. `() => states.Terminated()`). */
  onAbort?(): State<C>;
}

interface Run {
  abort: AbortController;
  status: PodStatusReport;
  done: Promise<RunResult<unknown>>;
}

/** A `PodLifecycle` (the contract's, `@nodelet/plugin-api/v1`) that runs one state machine per pod, built by `build`. */
export function podLifecycleFromMachine<C>(
  build: (pod: PodObject, ctx: PodLifecycleContext) => PodMachine<C>,
): Omit<PodLifecycle, 'getPodStatus'> & { getPodStatus(pod: PodRef): PodStatusReport | undefined; wait(uid: string): Promise<RunResult<unknown>> | undefined } {
  const runs = new Map<string, Run>();
  return {
    async createPod(pod, ctx) {
      if (runs.has(pod.metadata.uid)) return;
      const m = build(pod, ctx);
      const abort = new AbortController();
      const onPodGone = () => abort.abort();
      ctx.signal.addEventListener('abort', onPodGone, { once: true });
      const run: Run = { abort, status: { phase: 'Pending' }, done: undefined as unknown as Promise<RunResult<unknown>> };
      runs.set(pod.metadata.uid, run);
      run.done = runStateMachine(m.initial, m.context, abort.signal, {
        onAbort: m.onAbort,
        onStatus: (s) => {
          run.status = { phase: s.phase, reason: s.reason, message: s.message };
          ctx.statusChanged();
        },
      }).then((r) => {
        ctx.signal.removeEventListener('abort', onPodGone);
        if (r.error !== undefined) {
          const message = r.error instanceof Error ? r.error.message : String(r.error);
          ctx.log.error({ state: r.final.name, err: message }, 'pod state machine failed');
          run.status = { phase: 'Failed', reason: 'StateMachineError', message };
          ctx.statusChanged();
        }
        return r as RunResult<unknown>;
      });
    },
    async deletePod(pod) {
      const run = runs.get(pod.metadata.uid);
      if (!run) return;
      run.abort.abort();
      await run.done;
      runs.delete(pod.metadata.uid);
    },
    getPodStatus(pod: PodRef) {
      return runs.get(pod.uid)?.status;
    },
    wait(uid) {
      return runs.get(uid)?.done;
    },
  };
}

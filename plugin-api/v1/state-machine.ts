/**
 * A small state machine runner in the spirit of Krustlet's: a state is a value
 * with a `name`, the names of the states it may move to (`transitions`), the
 * status it reports while current, and an async `next(ctx, signal)` that
 * returns a transition. The runner checks every transition against the
 * declaration at runtime: an undeclared one stops the machine with a branded
 * `UndeclaredTransition` error instead of wandering into an unplanned state.
 *
 *   runStateMachine(initial, ctx, signal, { onStatus, onAbort })
 *
 *        ┌──────────────┐  onStatus(state.status(ctx))
 *        │ current state │──────────────────────────────► (core posts it)
 *        └──────┬───────┘
 *               │ await next(ctx, signal)
 *               ▼
 *      next(S) ─┬─ S.name ∈ current.transitions ──► current = S ──┐
 *               └─ otherwise ──► error UndeclaredTransition       │
 *      complete() ──► done                                         │
 *      signal aborted ──► current = onAbort() (if declared) ◄──────┘
 *
 * The reusable pod states built on it are in `pod-states.ts`.
 */
import { providerError } from './errors.ts';
import type { PodPhase } from './pod-lifecycle.ts';

/** What a state reports while it is current: the pod phase and a reason/message. */
export interface StateStatus {
  /** The pod phase the state reports. */
  readonly phase: PodPhase;
  /** A CamelCase reason (e.g. `ImagePullBackOff`). */
  readonly reason?: string;
  /** A human-readable explanation, e.g. the error that led to the state. */
  readonly message?: string;
}

/** The result of a state's `next`: move to another state, or finish the machine. */
export type Transition<C> = { readonly kind: 'next'; readonly state: State<C> } | { readonly kind: 'complete'; readonly error?: unknown };

/** One state of a machine over a context `C`. */
export interface State<C> {
  /** The state's name (unique within a machine; transitions refer to it). */
  readonly name: string;
  /** Names of the states `next` may move to. Completing is always allowed. */
  readonly transitions: readonly string[];
  /** The status reported while this state is current. */
  status(ctx: C): StateStatus;
  /** Does the state's work and says where to go. `signal` aborts when the pod goes away. */
  next(ctx: C, signal: AbortSignal): Promise<Transition<C>> | Transition<C>;
}

/** Moves to `state` (checked against the current state's `transitions`). */
export function next<C>(state: State<C>): Transition<C> {
  return { kind: 'next', state };
}

/** Finishes the machine; `error` is reported in the result when set. */
export function complete<C>(error?: unknown): Transition<C> {
  return { kind: 'complete', error };
}

/** Defines a state, checking its declaration (non-empty name, string transitions). */
export function defineState<C>(def: State<C>): State<C> {
  if (typeof def.name !== 'string' || def.name === '') throw providerError('InvalidArgument', 'a state needs a non-empty name');
  if (!Array.isArray(def.transitions) || def.transitions.some((t) => typeof t !== 'string')) {
    throw providerError('InvalidArgument', `state ${def.name}: transitions must be a list of state names`);
  }
  return def;
}

/** Options of {@link runStateMachine}. */
export interface RunOptions<C> {
  /** Called with each state's status when it becomes current. */
  onStatus?(status: StateStatus, state: State<C>): void;
  /** The state to move to when `signal` aborts (e.g. `Terminated`); must be declared by the current state. */
  onAbort?(): State<C>;
  /** Stops a runaway machine after this many transitions (default: unlimited). */
  maxTransitions?: number;
}

/** How a machine ended. */
export interface RunResult<C> {
  /** The last state. */
  readonly final: State<C>;
  /** The last status reported. */
  readonly status: StateStatus;
  /** True when `signal` aborted the machine. */
  readonly aborted: boolean;
  /** Set when a state failed, completed with an error, or made an undeclared transition. */
  readonly error?: unknown;
  /** Names of the states visited, in order. */
  readonly path: readonly string[];
}

/** The message of the error raised for an undeclared transition. */
export function undeclaredTransitionMessage(from: State<unknown>, to: string): string {
  const allowed = from.transitions.length ? from.transitions.join(', ') : 'none';
  return `undeclared state transition ${from.name} → ${to} (${from.name} may move to: ${allowed})`;
}

/**
 * Runs a machine from `initial` until a state completes, a state throws, or
 * `signal` aborts (then `onAbort()` runs to completion, if given). Never rejects.
 */
export async function runStateMachine<C>(initial: State<C>, ctx: C, signal: AbortSignal, opts: RunOptions<C> = {}): Promise<RunResult<C>> {
  let current = initial;
  let status = current.status(ctx);
  const path = [current.name];
  let abortHandled = false;
  const enter = (s: State<C>) => {
    current = s;
    path.push(s.name);
    status = s.status(ctx);
    opts.onStatus?.(status, s);
  };
  const end = (extra: { aborted?: boolean; error?: unknown }): RunResult<C> => ({
    final: current,
    status,
    path,
    aborted: extra.aborted ?? signal.aborted,
    error: extra.error,
  });
  opts.onStatus?.(status, current);
  for (let steps = 0; ; steps++) {
    if (opts.maxTransitions !== undefined && steps >= opts.maxTransitions) {
      return end({
        error: providerError('Internal', `state machine exceeded ${opts.maxTransitions} transitions (at ${current.name})`, { reason: 'TooManyTransitions' }),
      });
    }
    if (signal.aborted && !abortHandled) {
      abortHandled = true;
      if (!opts.onAbort) return end({ aborted: true });
      const target = opts.onAbort();
      if (target.name !== current.name) {
        if (!current.transitions.includes(target.name)) return end({ aborted: true, error: undeclared(current, target.name) });
        enter(target);
      }
    }
    let t: Transition<C>;
    try {
      t = await current.next(ctx, signal);
    } catch (e) {
      return end({ error: e });
    }
    if (t.kind === 'complete') return end({ error: t.error });
    if (!current.transitions.includes(t.state.name)) return end({ error: undeclared(current, t.state.name) });
    enter(t.state);
  }
}

function undeclared(from: State<unknown>, to: string) {
  return providerError('Internal', undeclaredTransitionMessage(from, to), { reason: 'UndeclaredTransition' });
}

/**
 * Reusable pod states for a provider that owns whole pods (see `PodProvider`).
 * The states do the kubelet-shaped bookkeeping; the provider supplies the work
 * through a {@link PodMachineContext} and replaces only the states that differ
 * (`podStates({ Starting: (s) => () => myStarting(s) })`).
 *
 *   Registered ──► ImagePull ──► VolumeMount ──► Initializing ──► Starting ──► Running ──► Completed
 *       │            │  ▲            │               │               │           │  (exit 0, policy ≠ Always)
 *       │            ▼  │            │               │               │           │
 *       │      ImagePullBackOff      │               │               │           ├─ exit 0, Always ─┐
 *       ▼                            ▼               ▼               ▼           ▼                  │
 *     Error ◄────────────────────────┴───────────────┴───────────────┴──────── Error (exit ≠ 0)     │
 *       │ policy Never: complete (Failed)                                                          │
 *       └─ otherwise ──► CrashLoopBackOff ◄────────────────────────────────────────────────────────┘
 *                             │ back-off elapsed
 *                             └──► Registered
 *
 *   every state ──(pod deleted: signal aborted)──► Terminated ──► complete
 *
 * Statuses: Registered..Starting report Pending; Running and CrashLoopBackOff
 * report Running; Completed Succeeded; Error Failed under `restartPolicy:
 * Never` (else Pending); Terminated Succeeded (as Krustlet's).
 */
import { complete, defineState, next, type State } from './state-machine.ts';

/** Which back-off sequence a wait belongs to (tracked independently). */
export type BackoffKind = 'ImagePull' | 'CrashLoop';

/** The work the common states delegate to the provider, for one pod. */
export interface PodMachineContext {
  /** The pod's restart policy (`Always` when the spec omits it). */
  readonly restartPolicy: 'Always' | 'OnFailure' | 'Never';
  /** Registered: refuse a pod the provider cannot run (throw; the message becomes the Error state's). */
  validate?(): void | Promise<void>;
  /** ImagePull: fetch what the pod runs. A throw moves to ImagePullBackOff. */
  pullImages(signal: AbortSignal): Promise<void>;
  /** VolumeMount: make volumes available to the runtime (core has prepared them). */
  mountVolumes?(signal: AbortSignal): Promise<void>;
  /** Initializing: run init containers to completion. */
  runInitContainers?(signal: AbortSignal): Promise<void>;
  /** Starting: start the pod's main work; resolves once it runs. */
  start(signal: AbortSignal): Promise<void>;
  /** Running: resolves when the main work ends, with its exit code. */
  wait(signal: AbortSignal): Promise<{ exitCode: number; message?: string }>;
  /** Terminated: stop everything still running for the pod. */
  stop(): Promise<void>;
  /** Waits out the next back-off delay of `kind` (resolves early when `signal` aborts). */
  backoff(kind: BackoffKind, signal: AbortSignal): Promise<void>;
  /** Resets the back-off of `kind` after a success. */
  resetBackoff(kind: BackoffKind): void;
}

/** Factories of the common states; each state moves on through this table. */
export interface PodStates<C extends PodMachineContext> {
  /** The first state: `validate`, then ImagePull (Pending). */
  Registered(): State<C>;
  /** `pullImages`, then VolumeMount; a throw moves to ImagePullBackOff (Pending). */
  ImagePull(): State<C>;
  /** Waits out the `ImagePull` back-off, then ImagePull again; `message` is the pull's error (Pending). */
  ImagePullBackOff(message: string): State<C>;
  /** `mountVolumes`, then Initializing (Pending). */
  VolumeMount(): State<C>;
  /** `runInitContainers`, then Starting (Pending, `PodInitializing`). */
  Initializing(): State<C>;
  /** `start`, then Running (Pending, `ContainerCreating`). */
  Starting(): State<C>;
  /** `wait`: exit 0 moves to Completed (CrashLoopBackOff under `Always`), else to Error (Running). */
  Running(): State<C>;
  /** The pod ended well; the machine completes (Succeeded). */
  Completed(): State<C>;
  /** The pod failed with `message`: under `Never` the machine completes (Failed), else CrashLoopBackOff. */
  Error(message: string): State<C>;
  /** Waits out the `CrashLoop` back-off, then Registered again (Running, `CrashLoopBackOff`). */
  CrashLoopBackOff(message?: string): State<C>;
  /** The pod was deleted: `stop`, then the machine completes (Succeeded, `Terminated`). */
  Terminated(): State<C>;
}

/** Replacement factories: each receives the final table, so a custom state can reach the others. */
export type PodStateOverrides<C extends PodMachineContext> = { [K in keyof PodStates<C>]?: (states: PodStates<C>) => PodStates<C>[K] };

const T = 'Terminated';
const msg = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Builds the table of common pod states, with `overrides` replacing some of them. */
export function podStates<C extends PodMachineContext>(overrides: PodStateOverrides<C> = {}): PodStates<C> {
  const s = {} as PodStates<C>;
  const step = (
    name: string,
    transitions: string[],
    work: ((c: C, sig: AbortSignal) => Promise<void> | void) | undefined,
    then: () => State<C>,
    reason = name,
  ): State<C> =>
    defineState<C>({
      name,
      transitions: [...transitions, T],
      status: () => ({ phase: 'Pending', reason }),
      async next(c, sig) {
        try {
          await work?.(c, sig);
        } catch (e) {
          return next(s.Error(msg(e)));
        }
        return next(then());
      },
    });
  const defaults: PodStates<C> = {
    Registered: () =>
      step(
        'Registered',
        ['ImagePull', 'Error'],
        (c) => c.validate?.(),
        () => s.ImagePull(),
      ),
    ImagePull: () =>
      defineState<C>({
        name: 'ImagePull',
        transitions: ['VolumeMount', 'ImagePullBackOff', T],
        status: () => ({ phase: 'Pending', reason: 'ImagePull' }),
        async next(c, sig) {
          try {
            await c.pullImages(sig);
          } catch (e) {
            return next(s.ImagePullBackOff(msg(e)));
          }
          c.resetBackoff('ImagePull');
          return next(s.VolumeMount());
        },
      }),
    ImagePullBackOff: (message) =>
      defineState<C>({
        name: 'ImagePullBackOff',
        transitions: ['ImagePull', T],
        status: () => ({ phase: 'Pending', reason: 'ImagePullBackOff', message }),
        async next(c, sig) {
          await c.backoff('ImagePull', sig);
          return next(s.ImagePull());
        },
      }),
    VolumeMount: () =>
      step(
        'VolumeMount',
        ['Initializing', 'Error'],
        (c, sig) => c.mountVolumes?.(sig),
        () => s.Initializing(),
      ),
    Initializing: () =>
      step(
        'Initializing',
        ['Starting', 'Error'],
        (c, sig) => c.runInitContainers?.(sig),
        () => s.Starting(),
        'PodInitializing',
      ),
    Starting: () =>
      step(
        'Starting',
        ['Running', 'Error'],
        (c, sig) => c.start(sig),
        () => s.Running(),
        'ContainerCreating',
      ),
    Running: () =>
      defineState<C>({
        name: 'Running',
        transitions: ['Completed', 'Error', 'CrashLoopBackOff', T],
        status: () => ({ phase: 'Running' }),
        async next(c, sig) {
          let exit;
          try {
            exit = await c.wait(sig);
          } catch (e) {
            return next(s.Error(msg(e)));
          }
          if (exit.exitCode !== 0) return next(s.Error(exit.message ?? `exited with code ${exit.exitCode}`));
          return next(c.restartPolicy === 'Always' ? s.CrashLoopBackOff('exited with code 0; restartPolicy is Always') : s.Completed());
        },
      }),
    Completed: () =>
      defineState<C>({ name: 'Completed', transitions: [], status: () => ({ phase: 'Succeeded', reason: 'Completed' }), next: () => complete() }),
    Error: (message) =>
      defineState<C>({
        name: 'Error',
        transitions: ['CrashLoopBackOff', T],
        status: (c) => ({ phase: c.restartPolicy === 'Never' ? 'Failed' : 'Pending', reason: 'Error', message }),
        next: (c) => (c.restartPolicy === 'Never' ? complete() : next(s.CrashLoopBackOff(message))),
      }),
    CrashLoopBackOff: (message) =>
      defineState<C>({
        name: 'CrashLoopBackOff',
        transitions: ['Registered', T],
        status: () => ({ phase: 'Running', reason: 'CrashLoopBackOff', message }),
        async next(c, sig) {
          await c.backoff('CrashLoop', sig);
          return next(s.Registered());
        },
      }),
    Terminated: () =>
      defineState<C>({
        name: T,
        transitions: [],
        status: () => ({ phase: 'Succeeded', reason: 'Terminated' }),
        async next(c) {
          await c.stop();
          return complete();
        },
      }),
  };
  Object.assign(s, defaults);
  for (const [k, f] of Object.entries(overrides)) if (f) (s as unknown as Record<string, unknown>)[k] = (f as (t: PodStates<C>) => unknown)(s);
  return s;
}

/** Kubelet's container back-off: 10 s doubling to 5 min (per kind). */
export interface BackoffOptions {
  /** The first delay, in milliseconds (10 000 when left out). */
  readonly initialMs?: number;
  /** The longest delay, in milliseconds (300 000 when left out). */
  readonly maxMs?: number;
}

/** A per-pod back-off implementing `backoff`/`resetBackoff` of {@link PodMachineContext}. */
export function createBackoff(opts: BackoffOptions = {}): Pick<PodMachineContext, 'backoff' | 'resetBackoff'> & { delay(kind: BackoffKind): number } {
  const initial = opts.initialMs ?? 10_000;
  const max = opts.maxMs ?? 300_000;
  const current = new Map<BackoffKind, number>();
  return {
    delay: (kind) => current.get(kind) ?? 0,
    resetBackoff: (kind) => {
      current.delete(kind);
    },
    backoff(kind, signal) {
      const ms = Math.min(max, current.has(kind) ? current.get(kind)! * 2 : initial);
      current.set(kind, ms);
      return abortableSleep(ms, signal);
    },
  };
}

/** Resolves after `ms`, or as soon as `signal` aborts. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

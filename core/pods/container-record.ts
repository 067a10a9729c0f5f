/**
 * What nodelet knows about one container of a pod. A container moves through
 *
 *   waiting(ContainerCreating) ──start──► running ──exit──► terminated
 *        ▲   │ pull/start error                              │
 *        │   ▼                                               │ restart policy says restart
 *   waiting(ErrImagePull|ImagePullBackOff|CreateContainerError|CrashLoopBackOff) ◄─┘
 *
 * `last` keeps the previous termination (status `lastState.terminated`).
 */
import type { PulledImage, RunningContainer } from '@nodelet/plugin-api/v1';
import type { ContainerProbes } from '../probes/index.ts';

/** A finished run of a container. */
export interface Termination {
  exitCode: number;
  reason: string;
  message?: string;
  startedAt: Date;
  finishedAt: Date;
  containerID: string;
}

/** The state of one container. */
export interface ContainerRecord {
  name: string;
  init: boolean;
  restartCount: number;
  /** Set while waiting (not running, and either never ran or waiting to restart). */
  waiting?: { reason: string; message?: string };
  running?: RunningContainer;
  containerID?: string;
  startedAt?: Date;
  /** The current termination (the container is not running and will not restart, or waits to). */
  terminated?: Termination;
  /** The termination before the current run (lastState). */
  last?: Termination;
  image?: PulledImage;
  /** True while a start is in progress (pull or provider start). */
  starting?: boolean;
  /** The last image pull error and when it happened (for ImagePullBackOff). */
  pullError?: string;
  pullFailedAt?: number;
  /** The probes of the current run (core/probes), when the container declares any. */
  probes?: ContainerProbes;
  /** True while the current run is being killed (preStop, then stop). */
  killing?: boolean;
  /**
   * Settles once the current run's exit is recorded in `terminated` (its termination message
   * read): a stop waits for it, so that the status posted after a stop shows the termination.
   */
  recorded?: Promise<void>;
  /**
   * Set after nodelet restarted when the API says this container runs and the
   * provider keeps containers across restarts: the run to re-adopt (its
   * `wasi://…` containerID and start time) at the pod's first sync.
   */
  adopt?: { containerID: string; startedAt: Date };
  /**
   * Set while the run is killed for a resize whose `resizePolicy` is `RestartContainer`
   * (container-resize.ts): it starts again at once whatever the pod's restart policy, and
   * until then it counts as running for the pod's phase (upstream kills and starts it in one sync).
   */
  resizeRestart?: boolean;
}

/** Upstream's `started`: running, and its Startup probe (if any) succeeded. */
export function isStarted(c: ContainerRecord): boolean {
  return !!c.running && (c.probes?.started() ?? true);
}

/** Upstream's `ready` of an app container: started, and its Readiness probe (if any) succeeded. */
export function isReady(c: ContainerRecord): boolean {
  return isStarted(c) && (c.probes?.ready() ?? true);
}

/** A new record for a container that has not started yet. */
export function newRecord(name: string, init: boolean, restartCount = 0): ContainerRecord {
  return { name, init, restartCount, waiting: { reason: 'ContainerCreating' } };
}

/**
 * What the pod controller and the kubelet API need from whatever runs one
 * admitted pod: the one `PodWorker`, for both provider kinds (its driver
 * adapts the provider). The controller depends on this interface only.
 */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import type { AnyProvider } from '@nodelet/plugin-api/v1';
import type { ContainerRecord } from './container-record.ts';

/** One container as the kubelet API's log endpoints see it. */
export interface RunnerContainer {
  /** Restart count of the most recent instance that started: its log is `<restartCount>.log`. */
  readonly restartCount: number;
  /** True while that instance runs (`follow=true` streams until it ends). */
  readonly running: boolean;
  /** Optional: settles when that instance ends, so a follow ends at once (else it polls). */
  readonly exited?: Promise<unknown>;
  /** The provider's id of the running instance (container providers), for `attach`. */
  readonly id?: string;
}

/** Runs one admitted pod. */
export interface PodRunner {
  /** The provider running the pod. */
  readonly provider: AnyProvider;
  /** Converges the pod towards its spec; returns quickly (never waits for containers to end). */
  reconcile(pod: V1Pod): Promise<void>;
  /** The status to post (the controller patches it only when it changed). */
  status(pod: V1Pod): V1PodStatus;
  /** True once the pod reached Succeeded or Failed for good. */
  finished(pod: V1Pod): boolean;
  /**
   * Optional: the pod is being deleted. Aborts what is in flight (image pulls,
   * container starts: the pod context's signal) at once, without waiting for the
   * sync running them, and starts nothing more; `terminate` follows. Upstream
   * cancels the running sync of a pod the same way when its termination is requested.
   */
  cancel?(): void;
  /** Stops the pod within `graceMs` and frees what the runner holds; never rejects. */
  terminate(pod: V1Pod, graceMs: number): Promise<void>;
  /** Container `name` if it has started at least once, else undefined. */
  container(name: string): RunnerContainer | undefined;
}

/** The log view of a {@link ContainerRecord} (undefined until it has run). */
export function recordView(rec: ContainerRecord | undefined): RunnerContainer | undefined {
  if (!rec || (!rec.running && !rec.terminated && !rec.last)) return undefined;
  return { restartCount: rec.restartCount, running: !!rec.running, exited: rec.running?.exit, id: rec.running?.id };
}

/**
 * One container as the kubelet API's log and attach endpoints see it, whatever
 * driver runs it: the pod worker answers `container(name)` with this view.
 */
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

/** The log view of a {@link ContainerRecord} (undefined until it has run). */
export function recordView(rec: ContainerRecord | undefined): RunnerContainer | undefined {
  if (!rec || (!rec.running && !rec.terminated && !rec.last)) return undefined;
  return { restartCount: rec.restartCount, running: !!rec.running, exited: rec.running?.exit, id: rec.running?.id };
}

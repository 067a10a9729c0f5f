/**
 * Small helpers of the container driver: Go-style durations for upstream's
 * back-off message, and picking a container's history up from the API status
 * after nodelet restarted (re-adoption of a provider's surviving containers:
 * container-adoption.ts).
 */
import type { V1ContainerStatus } from '@kubernetes/client-node';
import type { ContainerRecord, Termination } from './container-record.ts';

/** A duration as Go's time.Duration prints it (`10s`, `1m20s`, `5m0s`, `250ms`), as in upstream's back-off message. */
export function goDuration(ms: number): string {
  if (ms <= 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000),
    m = Math.floor((ms % 3_600_000) / 60_000),
    s = (ms % 60_000) / 1000;
  return `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
}

/** The termination recorded for a container that ran before nodelet restarted and cannot be found now (upstream's reason and code). */
export function lostRun(containerID: string, startedAt: Date, message = 'The container stopped when nodelet restarted'): Termination {
  return { exitCode: 137, reason: 'ContainerStatusUnknown', message, startedAt, finishedAt: new Date(), containerID };
}

/**
 * Picks up a container's history from the API status after nodelet restarted:
 * finished containers stay finished (init containers are not re-run). A
 * container that was running is, when `adoptable` (the provider keeps
 * containers across nodelet restarts), marked for re-adoption at the pod's
 * first sync (`rec.adopt`; its restart count and last termination kept);
 * otherwise it died with the previous nodelet process — it is recorded as
 * terminated (exit 137, `ContainerStatusUnknown`, as upstream reports a
 * container it cannot find), so the restart policy decides what happens next.
 */
export function resume(rec: ContainerRecord, statuses?: V1ContainerStatus[], adoptable = false): ContainerRecord {
  const s = statuses?.find((c) => c.name === rec.name);
  if (!s) return rec;
  rec.restartCount = s.restartCount ?? 0;
  const containerID = s.containerID ?? '';
  const t = s.state?.terminated;
  if (s.state?.running && adoptable && containerID) {
    rec.adopt = { containerID, startedAt: new Date(s.state.running.startedAt ?? 0) };
    const l = s.lastState?.terminated;
    if (l)
      rec.last = {
        exitCode: l.exitCode,
        reason: l.reason ?? 'Error',
        message: l.message,
        startedAt: new Date(l.startedAt ?? 0),
        finishedAt: new Date(l.finishedAt ?? 0),
        containerID: l.containerID ?? '',
      };
    return rec;
  }
  if (t) {
    rec.terminated = {
      exitCode: t.exitCode,
      reason: t.reason ?? 'Error',
      message: t.message,
      startedAt: new Date(t.startedAt ?? 0),
      finishedAt: new Date(t.finishedAt ?? 0),
      containerID,
    };
  } else if (s.state?.running) {
    rec.terminated = lostRun(containerID, new Date(s.state.running.startedAt ?? 0));
  } else {
    return rec;
  }
  rec.waiting = undefined;
  rec.containerID = containerID || undefined;
  return rec;
}

/**
 * Turns what a `PodProvider` reports (`PodStatusReport`) into the core/v1
 * PodStatus nodelet posts: the provider decides phase, reason and container
 * states; core adds host IPs, start time, the upstream conditions
 * (`PodReadyToStartContainers`, `Initialized`, `ContainersReady`, `Ready`, with
 * upstream reasons) and `lastState` from the terminations it has seen.
 */
import type { V1Container, V1ContainerState, V1ContainerStateTerminated, V1ContainerStatus, V1Pod, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';
import type { ContainerStatusReport, PodStatusReport } from '@nodelet/plugin-api/v1';
import { mergePodConditions, podConditions } from './pod-status.ts';

const PHASES = new Set(['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown']);

/** Inputs of {@link statusFromReport}. */
export interface ReportStatusInput {
  pod: V1Pod;
  report: PodStatusReport;
  hostIP: string;
  startTime: Date;
  /** Volumes are prepared and the provider has the pod (`PodReadyToStartContainers`). */
  sandboxReady: boolean;
  now: Date;
  /** The waiting state shown for containers the report leaves out (default `ContainerCreating`). */
  unreported?: { reason: string; message?: string };
  /** The termination before the current run of a container, if known (`lastState`). */
  lastTermination?(name: string, init: boolean, current: ContainerStatusReport): V1ContainerStateTerminated | undefined;
}

/** True for Succeeded and Failed. */
export const isTerminalPhase = (phase: string | undefined): boolean => phase === 'Succeeded' || phase === 'Failed';

/** Why `r` is not a usable PodStatusReport, or undefined when it is. */
export function reportProblem(r: unknown): string | undefined {
  if (typeof r !== 'object' || r === null) return `getPodStatus returned ${r === null ? 'null' : typeof r}, not a status`;
  const s = r as PodStatusReport;
  if (!PHASES.has(s.phase)) return `getPodStatus returned phase ${JSON.stringify(s.phase)} (expected one of ${[...PHASES].join(', ')})`;
  for (const list of [s.initContainers, s.containers]) {
    if (list === undefined) continue;
    if (!Array.isArray(list)) return 'getPodStatus returned container statuses that are not a list';
    for (const c of list as unknown[]) {
      const st = (c as ContainerStatusReport | null)?.state as Record<string, unknown> | undefined;
      const set = st && typeof st === 'object' ? ['waiting', 'running', 'terminated'].filter((k) => st[k] !== undefined) : [];
      if (typeof (c as ContainerStatusReport | null)?.name !== 'string' || set.length !== 1) {
        return `getPodStatus returned an invalid container status ${JSON.stringify(c)} (needs a name and exactly one of waiting, running, terminated)`;
      }
    }
  }
  return undefined;
}

const date = (d: unknown): Date | undefined => {
  if (d === undefined || d === null) return undefined;
  const x = d instanceof Date ? d : new Date(d as string);
  return Number.isNaN(x.getTime()) ? undefined : x;
};

/** A container state report as core/v1 ContainerState. */
export function containerState(r: ContainerStatusReport): V1ContainerState {
  const s = r.state;
  if ('waiting' in s && s.waiting) return { waiting: { reason: s.waiting.reason, message: s.waiting.message } };
  if ('running' in s && s.running) return { running: { startedAt: date(s.running.startedAt) } };
  const t = (s as Extract<typeof s, { terminated: unknown }>).terminated;
  return {
    terminated: {
      exitCode: t.exitCode,
      reason: t.reason,
      message: t.message,
      startedAt: date(t.startedAt),
      finishedAt: date(t.finishedAt),
      containerID: r.containerID,
    },
  };
}

function containerStatus(i: ReportStatusInput, spec: V1Container, init: boolean, r: ContainerStatusReport | undefined): V1ContainerStatus {
  const waiting = i.unreported ?? { reason: 'ContainerCreating' };
  if (!r) return { name: spec.name, image: spec.image ?? '', imageID: '', restartCount: 0, ready: false, started: false, state: { waiting }, lastState: {} };
  const state = containerState(r);
  const last = i.lastTermination?.(spec.name, init, r);
  const s: V1ContainerStatus = {
    name: spec.name,
    image: spec.image ?? '',
    imageID: r.imageID ?? '',
    restartCount: r.restartCount ?? 0,
    // An app container is ready only while it runs; an init container once it exited 0 (upstream prober rules).
    ready: init ? state.terminated?.exitCode === 0 : !!state.running && r.ready === true,
    started: !!state.running,
    state,
    lastState: last ? { terminated: last } : {},
  };
  if (r.containerID) s.containerID = r.containerID;
  return s;
}

type Cond = Pick<V1PodCondition, 'type' | 'status' | 'reason' | 'message'>;

function conditions(phase: string, init: V1ContainerStatus[], app: V1ContainerStatus[], sandboxReady: boolean): Cond[] {
  const uninit = init.filter((c) => c.state?.terminated?.exitCode !== 0).map((c) => c.name);
  const unready = app.filter((c) => !c.ready).map((c) => c.name);
  return podConditions(phase, uninit, unready, sandboxReady);
}

/** The core/v1 PodStatus for a provider's report (the report must pass {@link reportProblem}). */
export function statusFromReport(i: ReportStatusInput): V1PodStatus {
  const spec = i.pod.spec!;
  const r = i.report;
  const find = (list: readonly ContainerStatusReport[] | undefined, name: string) => list?.find((c) => c.name === name);
  const init = (spec.initContainers ?? []).map((c) => containerStatus(i, c, true, find(r.initContainers, c.name)));
  const app = spec.containers.map((c) => containerStatus(i, c, false, find(r.containers, c.name)));
  return {
    phase: r.phase,
    // null clears a reason/message the provider no longer reports (strategic merge patch).
    reason: (r.reason ?? null) as string | undefined,
    message: (r.message ?? null) as string | undefined,
    conditions: mergePodConditions(i.pod.status?.conditions, conditions(r.phase, init, app, i.sandboxReady), i.now),
    hostIP: i.hostIP,
    hostIPs: [{ ip: i.hostIP }],
    startTime: i.startTime,
    qosClass: i.pod.status?.qosClass,
    initContainerStatuses: init.length ? init : undefined,
    containerStatuses: app,
  };
}

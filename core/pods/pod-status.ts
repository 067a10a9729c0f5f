/**
 * Computes a pod's status from its container records, with upstream's rules
 * (pkg/kubelet/kubelet_pods.go getPhase, pkg/kubelet/status/generate.go).
 */
import type { V1Container, V1ContainerStatus, V1Pod, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';
import { isReady, isStarted, type ContainerRecord } from './container-record.ts';
import { containerShouldRestart, isSidecar } from './restart-rules.ts';

/** The spec of `c` in `pod` (undefined when the spec no longer names it). */
export function specOf(pod: V1Pod, c: ContainerRecord): V1Container | undefined {
  return (c.init ? pod.spec?.initContainers : pod.spec?.containers)?.find((s) => s.name === c.name);
}

/** The termination a waiting container shows as `lastState` (it exited before, and waits to restart). */
const lastExit = (c: ContainerRecord) => c.terminated ?? c.last;

/** Upstream HasAnyActiveRegularContainerStarted: an app container has run, so the pod is initialized for good. */
export function anyAppStarted(app: ContainerRecord[]): boolean {
  return app.some((c) => !!(c.running || c.terminated || c.last));
}

/**
 * Upstream's phase rules (kubelet_pods.go getPhase, ContainerRestartRules on):
 * a regular init container that failed and will not restart fails the pod;
 * sidecars count as running while they run and not at all once they have
 * exited; app containers that all exited make the pod Succeeded (all exit 0)
 * or Failed, unless one of them restarts.
 */
export function podPhase(pod: V1Pod, init: ContainerRecord[], app: ContainerRecord[]): string {
  const spec = pod.spec;
  const restarts = (c: ContainerRecord, exitCode: number) => containerShouldRestart(specOf(pod, c), spec, exitCode);
  let pendingInit = 0,
    pendingSidecars = 0,
    failedInit = 0;
  let running = 0,
    waiting = 0,
    stopped = 0,
    stoppedForGood = 0,
    succeeded = 0;
  for (const c of init) {
    const sidecar = isSidecar(specOf(pod, c));
    if (c.running) {
      if (!sidecar) pendingInit++;
      else {
        running++;
        if (!isStarted(c)) pendingSidecars++;
      }
    } else if (c.waiting && !lastExit(c)) {
      if (!sidecar) pendingInit++;
      else {
        pendingSidecars++;
        waiting++;
      }
    } else if (!sidecar) {
      const t = lastExit(c);
      if (t && t.exitCode !== 0 && !restarts(c, t.exitCode)) failedInit++;
    }
  }
  for (const c of app) {
    if (c.running || c.resizeRestart) running++;
    else if (c.terminated && !c.waiting) {
      stopped++;
      if (!restarts(c, c.terminated.exitCode)) stoppedForGood++;
      if (c.terminated.exitCode === 0) succeeded++;
    } else if (lastExit(c)) {
      stopped++;
      if (!restarts(c, lastExit(c)!.exitCode)) stoppedForGood++;
    } else waiting++;
  }
  if (failedInit > 0) return 'Failed';
  if (pendingInit > 0 || (pendingSidecars > 0 && !anyAppStarted(app)) || waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped > 0) {
    if (stopped !== stoppedForGood) return 'Running'; // one of them restarts
    return stopped === succeeded ? 'Succeeded' : 'Failed';
  }
  return 'Pending';
}

/** Upstream's `ready` of a regular init container: it exited 0 and is not waiting to run again. */
const initDone = (c: ContainerRecord) => !c.running && !c.waiting && c.terminated?.exitCode === 0;

function toStatus(c: ContainerRecord, spec: V1Container | undefined): V1ContainerStatus {
  const s: V1ContainerStatus = {
    name: c.name,
    image: spec?.image ?? '',
    imageID: c.image?.imageID ?? '',
    restartCount: c.restartCount,
    // upstream prober: a regular init container is ready once it exited 0; a sidecar or an app container
    // once started and its readiness probe (if any) succeeded.
    ready: c.init && !isSidecar(spec) ? initDone(c) : isReady(c),
    started: isStarted(c),
    state: {},
    lastState: {},
  };
  if (c.containerID) s.containerID = c.containerID;
  if (c.running) s.state = { running: { startedAt: c.startedAt } };
  else if (c.waiting) s.state = { waiting: { reason: c.waiting.reason, message: c.waiting.message } };
  else if (c.terminated) s.state = { terminated: term(c.terminated) };
  const last = c.waiting && c.terminated ? c.terminated : c.last;
  if (last) s.lastState = { terminated: term(last) };
  return s;
}

function term(t: NonNullable<ContainerRecord['terminated']>): NonNullable<V1ContainerStatus['state']>['terminated'] {
  return { exitCode: t.exitCode, reason: t.reason, message: t.message, startedAt: t.startedAt, finishedAt: t.finishedAt, containerID: t.containerID };
}

type Cond = Pick<V1PodCondition, 'type' | 'status' | 'reason' | 'message'>;

/**
 * Upstream GeneratePodInitializedCondition / GenerateContainersReadyCondition:
 * a sidecar counts as initialized once started, a regular init container once
 * it exited 0, and every one of them once an app container has run; sidecars'
 * readiness is part of the pod's (listed before the app containers').
 */
function readiness(pod: V1Pod, phase: string, init: ContainerRecord[], app: ContainerRecord[], sandboxReady: boolean): Cond[] {
  const sidecar = (c: ContainerRecord) => isSidecar(specOf(pod, c));
  const uninit = anyAppStarted(app) ? [] : init.filter((c) => !(sidecar(c) ? isStarted(c) : initDone(c))).map((c) => c.name);
  const unready = [...init.filter(sidecar), ...app].filter((c) => !isReady(c)).map((c) => c.name);
  return podConditions(phase, uninit, unready, sandboxReady);
}

/**
 * The kubelet-owned pod conditions (PodReadyToStartContainers, Initialized,
 * ContainersReady, Ready) with upstream's reasons and messages, from the phase
 * and the names of init containers not yet done and app containers not ready.
 */
export function podConditions(phase: string, uninit: string[], unready: string[], sandboxReady: boolean): Cond[] {
  const done = phase === 'Succeeded' || phase === 'Failed';
  const notReady = (type: string, reason: string, msg: string): Cond => ({ type, status: 'False', reason, message: msg });
  const conds: Cond[] = [{ type: 'PodReadyToStartContainers', status: sandboxReady && !done ? 'True' : 'False' }];
  conds.push(
    phase === 'Succeeded'
      ? { type: 'Initialized', status: 'True', reason: 'PodCompleted' }
      : uninit.length === 0
        ? { type: 'Initialized', status: 'True' }
        : notReady('Initialized', 'ContainersNotInitialized', `containers with incomplete status: [${uninit.join(' ')}]`),
  );
  if (done) {
    const reason = phase === 'Failed' ? 'PodFailed' : 'PodCompleted';
    conds.push(notReady('ContainersReady', reason, ''), notReady('Ready', reason, ''));
  } else if (unready.length) {
    const msg = `containers with unready status: [${unready.join(' ')}]`;
    conds.push(notReady('ContainersReady', 'ContainersNotReady', msg), notReady('Ready', 'ContainersNotReady', msg));
  } else {
    conds.push({ type: 'ContainersReady', status: 'True' }, { type: 'Ready', status: 'True' });
  }
  // null (not absent): the status is sent as a strategic merge patch, where an absent field keeps its old value.
  return conds.map((c) => ({ ...c, reason: c.reason ?? null, message: c.message || null }) as Cond);
}

/** Merges conditions, keeping lastTransitionTime when a condition's status did not change. */
export function mergePodConditions(prev: V1PodCondition[] | undefined, next: Cond[], now: Date): V1PodCondition[] {
  const out: V1PodCondition[] = (prev ?? []).filter((p) => !next.some((n) => n.type === p.type));
  for (const c of next) {
    const old = prev?.find((p) => p.type === c.type);
    const same = old && old.status === c.status;
    out.push({ ...c, lastProbeTime: null as unknown as undefined, lastTransitionTime: same && old.lastTransitionTime ? old.lastTransitionTime : now });
  }
  return out;
}

/** Inputs of {@link computePodStatus}. */
export interface StatusInput {
  pod: V1Pod;
  init: ContainerRecord[];
  app: ContainerRecord[];
  hostIP: string;
  startTime: Date;
  sandboxReady: boolean;
  now: Date;
}

/** The status nodelet posts for a running (admitted) pod. */
export function computePodStatus(i: StatusInput): V1PodStatus {
  const phase = podPhase(i.pod, i.init, i.app);
  return {
    phase,
    conditions: mergePodConditions(i.pod.status?.conditions, readiness(i.pod, phase, i.init, i.app, i.sandboxReady), i.now),
    hostIP: i.hostIP,
    hostIPs: [{ ip: i.hostIP }],
    startTime: i.startTime,
    qosClass: i.pod.status?.qosClass,
    initContainerStatuses: i.init.length ? i.init.map((c) => toStatus(c, specOf(i.pod, c))) : undefined,
    containerStatuses: i.app.map((c) => toStatus(c, specOf(i.pod, c))),
  };
}

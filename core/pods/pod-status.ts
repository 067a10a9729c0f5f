/**
 * Computes a pod's status from its container records, with upstream's rules
 * (pkg/kubelet/kubelet_pods.go getPhase, pkg/kubelet/status/generate.go).
 */
import type { V1ContainerStatus, V1Pod, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';
import { isReady, isStarted, type ContainerRecord } from './container-record.ts';

/** Upstream's phase rules for the app and init containers. */
export function podPhase(pod: V1Pod, init: ContainerRecord[], app: ContainerRecord[]): string {
  const policy = pod.spec?.restartPolicy ?? 'Always';
  for (const c of init) {
    if (c.terminated?.exitCode === 0 && !c.running) continue;
    if (c.terminated && policy === 'Never') return 'Failed';
    return 'Pending';
  }
  let running = 0,
    waiting = 0,
    stopped = 0,
    succeeded = 0;
  for (const c of app) {
    if (c.running) running++;
    else if (c.terminated && !c.waiting) {
      stopped++;
      if (c.terminated.exitCode === 0) succeeded++;
    } else if (c.last || c.terminated) stopped++;
    else waiting++;
  }
  if (waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped > 0) {
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (policy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}

function toStatus(c: ContainerRecord, image: string): V1ContainerStatus {
  const s: V1ContainerStatus = {
    name: c.name,
    image,
    imageID: c.image?.imageID ?? '',
    restartCount: c.restartCount,
    // upstream prober: an init container is ready once it exited 0; an app container once started and its readiness probe (if any) succeeded.
    ready: c.init ? !c.running && !c.waiting && c.terminated?.exitCode === 0 : isReady(c),
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

function readiness(phase: string, init: ContainerRecord[], app: ContainerRecord[], sandboxReady: boolean): Cond[] {
  const uninit = init.filter((c) => !(c.terminated?.exitCode === 0 && !c.running)).map((c) => c.name);
  const unready = app.filter((c) => !isReady(c)).map((c) => c.name);
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
  const spec = i.pod.spec!;
  const image = (name: string, init: boolean) => (init ? spec.initContainers : spec.containers)?.find((c) => c.name === name)?.image ?? '';
  return {
    phase,
    conditions: mergePodConditions(i.pod.status?.conditions, readiness(phase, i.init, i.app, i.sandboxReady), i.now),
    hostIP: i.hostIP,
    hostIPs: [{ ip: i.hostIP }],
    startTime: i.startTime,
    qosClass: i.pod.status?.qosClass,
    initContainerStatuses: i.init.length ? i.init.map((c) => toStatus(c, image(c.name, true))) : undefined,
    containerStatuses: i.app.map((c) => toStatus(c, image(c.name, false))),
  };
}

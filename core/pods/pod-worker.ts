/**
 * One pod's containers: starts them in order (init containers one by one, then
 * the app containers), applies the restart policy with back-off, and stops
 * them on deletion. The pod controller calls `reconcile` on every sync; the
 * worker never blocks on a running container — exits re-queue the pod.
 * Volumes: set up and re-synced by `PodVolumes` (pod-volumes.ts), one cadence
 * for both provider kinds — its header says why.
 *
 *   pod:  Pending ──init done──► app containers start ──► Running
 *           │                                              │ all exited, policy allows no restart
 *           └──init failed (Never) ──► Failed ◄── some failed ┤
 *                                                Succeeded ◄─┘ all exit 0
 */
import type { V1Container, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { isProviderError, type Mount, type PodContext, type Provider } from '@nodelet/plugin-api/v1';
import { Backoff } from '../backoff/index.ts';
import { newRecord, type ContainerRecord } from './container-record.ts';
import { computePodStatus, podPhase } from './pod-status.ts';
import type { PodSetup } from './pod-setup.ts';
import { recordView, type PodRunner, type RunnerContainer } from './pod-runner.ts';
import { containerLimits } from './container-limits.ts';
import { PodVolumes } from './pod-volumes.ts';
import { terminationMessage } from './termination-message.ts';

/** Shared services of all pod workers. */
export interface WorkerDeps {
  provider: Provider;
  setup: PodSetup;
  hostIP: string;
  restartBackoff: Backoff;
  pullBackoff: Backoff;
  /** Retries of volume set-up (upstream: 500 ms doubling to 2m2s); defaults to `pullBackoff`. */
  volumeBackoff?: Backoff;
  /** Re-queues the pod's key after `ms`. */
  requeue(ms: number): void;
  /** Creates the per-pod context handed to the provider. */
  context(pod: V1Pod, signal: AbortSignal): PodContext;
  /** Records an event on the pod; `fieldPath` like `spec.containers{name}`. */
  event(type: 'Normal' | 'Warning', reason: string, note: string, fieldPath?: string): void;
}

const fieldPath = (c: ContainerRecord) => `spec.${c.init ? 'initContainers' : 'containers'}{${c.name}}`;
const podRef = (p: V1Pod) => `${p.metadata!.name}_${p.metadata!.namespace}(${p.metadata!.uid})`;

/** The state and behaviour of one admitted pod. */
export class PodWorker implements PodRunner {
  readonly init: ContainerRecord[];
  readonly app: ContainerRecord[];
  startTime: Date = new Date();
  private readonly volumes: PodVolumes;
  private readonly abort = new AbortController();
  private ctx?: PodContext;
  terminating = false;

  constructor(
    pod: V1Pod,
    private readonly d: WorkerDeps,
  ) {
    const st = pod.status;
    this.init = (pod.spec?.initContainers ?? []).map((c) => resume(newRecord(c.name, true), st?.initContainerStatuses));
    this.app = pod.spec!.containers.map((c) => resume(newRecord(c.name, false), st?.containerStatuses));
    if (st?.startTime) this.startTime = new Date(st.startTime);
    this.volumes = new PodVolumes({
      setup: d.setup,
      backoff: d.volumeBackoff ?? d.pullBackoff,
      requeue: (ms) => d.requeue(ms),
      event: (t, r, n) => d.event(t, r, n),
    });
  }

  /** The provider running this pod. */
  get provider(): Provider {
    return this.d.provider;
  }

  /** A container's log view (see {@link PodRunner.container}). */
  container(name: string): RunnerContainer | undefined {
    return recordView([...this.init, ...this.app].find((c) => c.name === name));
  }

  private key(c: ContainerRecord, pod: V1Pod): string {
    return `${pod.metadata!.uid}/${c.name}`;
  }

  /** The pod status to post. */
  status(pod: V1Pod): V1PodStatus {
    return computePodStatus({
      pod,
      init: this.init,
      app: this.app,
      hostIP: this.d.hostIP,
      startTime: this.startTime,
      sandboxReady: this.volumes.isReady,
      now: new Date(),
    });
  }

  /** True when every container has finished for good. */
  finished(pod: V1Pod): boolean {
    const phase = podPhase(pod, this.init, this.app);
    return phase === 'Succeeded' || phase === 'Failed';
  }

  /** The pod is being deleted: in-flight pulls and starts are aborted (see {@link PodRunner.cancel}). */
  cancel(): void {
    this.terminating = true;
    this.abort.abort();
  }

  /** Converges the containers towards the spec; returns quickly. */
  async reconcile(pod: V1Pod): Promise<void> {
    if (this.terminating) return;
    this.ctx ??= this.d.context(pod, this.abort.signal);
    if (!(await this.volumes.sync(pod))) return;
    for (const rec of this.init) {
      const spec = pod.spec!.initContainers!.find((c) => c.name === rec.name)!;
      if (rec.running || rec.starting) return;
      if (rec.terminated?.exitCode === 0) continue;
      if (rec.terminated && !this.shouldRestart(pod, rec)) return;
      await this.maybeStart(pod, spec, rec);
      return;
    }
    await Promise.all(
      this.app.map((rec) => {
        const spec = pod.spec!.containers.find((c) => c.name === rec.name)!;
        if (rec.running || rec.starting) return undefined;
        if (rec.terminated && !this.shouldRestart(pod, rec)) return undefined;
        return this.maybeStart(pod, spec, rec);
      }),
    );
  }

  private shouldRestart(pod: V1Pod, rec: ContainerRecord): boolean {
    const policy = pod.spec?.restartPolicy ?? 'Always';
    if (policy === 'Never') return false;
    if (policy === 'OnFailure' && rec.terminated!.exitCode === 0) return false;
    return true;
  }

  /** Starts `rec` unless a restart back-off is in force. */
  private async maybeStart(pod: V1Pod, spec: V1Container, rec: ContainerRecord): Promise<void> {
    if (rec.terminated) {
      const key = this.key(rec, pod);
      const left = this.d.restartBackoff.remaining(key, rec.terminated.finishedAt.getTime());
      if (left > 0) {
        const delay = goDuration(this.d.restartBackoff.delay(key));
        rec.waiting = { reason: 'CrashLoopBackOff', message: `back-off ${delay} restarting failed container=${rec.name} pod=${podRef(pod)}` };
        this.d.event('Warning', 'BackOff', `Back-off restarting failed container ${rec.name} in pod ${podRef(pod)}`, fieldPath(rec));
        this.d.requeue(left);
        return;
      }
      this.d.restartBackoff.next(key);
    }
    rec.starting = true;
    try {
      await this.start(pod, spec, rec);
    } finally {
      rec.starting = false;
    }
  }

  private async pull(pod: V1Pod, spec: V1Container, rec: ContainerRecord): Promise<boolean> {
    const image = spec.image ?? '';
    const key = `${this.key(rec, pod)}/image`;
    const left =
      rec.waiting?.reason === 'ErrImagePull' || rec.waiting?.reason === 'ImagePullBackOff' ? this.d.pullBackoff.remaining(key, rec.pullFailedAt ?? 0) : 0;
    if (left > 0) {
      rec.waiting = { reason: 'ImagePullBackOff', message: `Back-off pulling image "${image}": ${rec.pullError ?? ''}` };
      this.d.event('Normal', 'BackOff', `Back-off pulling image "${image}"`, fieldPath(rec));
      this.d.event('Warning', 'Failed', 'Error: ImagePullBackOff', fieldPath(rec));
      this.d.requeue(left);
      return false;
    }
    const policy = (spec.imagePullPolicy ?? (/:latest$|^[^:@]*$/.test(image.replace(/^[^/]*\//, '')) ? 'Always' : 'IfNotPresent')) as
      'Always' | 'IfNotPresent' | 'Never';
    const t0 = Date.now();
    try {
      if (!rec.image || policy === 'Always') this.d.event('Normal', 'Pulling', `Pulling image "${image}"`, fieldPath(rec));
      const credentials = await this.d.setup.credentials(pod);
      rec.image = await this.d.provider.pullImage(image, { pullPolicy: policy, credentials }, this.ctx!);
      const secs = ((Date.now() - t0) / 1000).toFixed(3);
      this.d.event(
        'Normal',
        'Pulled',
        rec.image.cached
          ? `Container image "${image}" already present on machine`
          : `Successfully pulled image "${image}" in ${secs}s. Image size: ${rec.image.size} bytes.`,
        fieldPath(rec),
      );
      this.d.pullBackoff.reset(key);
      return true;
    } catch (e) {
      if (this.terminating) return false; // aborted because the pod is being deleted
      const msg = (e as Error).message;
      rec.waiting = { reason: 'ErrImagePull', message: msg };
      rec.pullError = msg;
      rec.pullFailedAt = Date.now();
      this.d.event('Warning', 'Failed', `Failed to pull image "${image}": ${msg}`, fieldPath(rec));
      this.d.event('Warning', 'Failed', 'Error: ErrImagePull', fieldPath(rec));
      // Sync again at once so the back-off shows as ImagePullBackOff (the next pull waits for it).
      this.d.pullBackoff.next(key);
      this.d.requeue(0);
      return false;
    }
  }

  private async start(pod: V1Pod, spec: V1Container, rec: ContainerRecord): Promise<void> {
    if (this.terminating) return;
    if (!(await this.pull(pod, spec, rec))) return;
    if (this.terminating) return;
    const restartCount = rec.terminated || rec.last ? rec.restartCount + 1 : rec.restartCount;
    let config;
    try {
      const env = await this.d.setup.env(pod, spec);
      config = { env, argv: this.d.setup.argv(spec, env), mounts: await this.d.setup.mounts(pod, spec, this.volumes.prepared, env) };
    } catch (e) {
      return this.startFailed(pod, rec, 'CreateContainerConfigError', (e as Error).message);
    }
    const id = `${pod.metadata!.uid!.slice(0, 8)}-${rec.name}-${restartCount}-${Date.now().toString(36)}`;
    const logPath = this.d.setup.logPath(pod, rec.name, restartCount);
    try {
      const running = await this.d.provider.startContainer(
        {
          id,
          pod: { namespace: pod.metadata!.namespace!, name: pod.metadata!.name!, uid: pod.metadata!.uid! },
          name: rec.name,
          image: rec.image!,
          ...config,
          workingDir: spec.workingDir,
          restartCount,
          limits: containerLimits(spec),
          logPath,
        },
        this.ctx!,
      );
      this.d.event('Normal', 'Created', `Created container: ${rec.name}`, fieldPath(rec));
      this.d.event('Normal', 'Started', `Started container ${rec.name}`, fieldPath(rec));
      this.onStarted(pod, rec, running, restartCount, { spec, mounts: config.mounts, logPath });
    } catch (e) {
      if (this.terminating) return; // aborted because the pod is being deleted
      const reason = isProviderError(e) ? 'CreateContainerError' : 'RunContainerError';
      return this.startFailed(pod, rec, reason, (e as Error).message);
    }
  }

  private startFailed(pod: V1Pod, rec: ContainerRecord, reason: string, message: string): void {
    rec.waiting = { reason, message };
    this.d.event('Warning', 'Failed', `Error: ${message}`, fieldPath(rec));
    this.d.requeue(this.d.restartBackoff.next(`${this.key(rec, pod)}/create`));
  }

  private onStarted(
    _pod: V1Pod,
    rec: ContainerRecord,
    running: import('@nodelet/plugin-api/v1').RunningContainer,
    restartCount: number,
    run: { spec: V1Container; mounts: Mount[]; logPath: string },
  ): void {
    if (rec.terminated) rec.last = rec.terminated;
    rec.terminated = undefined;
    rec.waiting = undefined;
    rec.running = running;
    rec.restartCount = restartCount;
    rec.startedAt = running.startedAt;
    rec.containerID = `${this.d.provider.name}://${running.id}`;
    void running.exit.then(async (x) => {
      const message = await terminationMessage(run.spec, x, run.mounts, run.logPath).catch(() => x.message);
      rec.running = undefined;
      rec.terminated = { ...x, message, startedAt: running.startedAt, containerID: rec.containerID! };
      this.d.requeue(0);
    });
  }

  /** Stops every container within `graceMs` (emitting `Killing`), then frees the pod's resources. */
  async terminate(pod: V1Pod, graceMs: number): Promise<void> {
    this.terminating = true;
    const live = [...this.init, ...this.app].filter((r) => r.running);
    await Promise.all(
      live.map(async (rec) => {
        this.d.event('Normal', 'Killing', `Stopping container ${rec.name}`, fieldPath(rec));
        await rec.running!.stop(graceMs);
      }),
    );
    this.abort.abort();
    this.d.restartBackoff.resetPrefix(`${pod.metadata!.uid}/`);
    this.d.pullBackoff.resetPrefix(`${pod.metadata!.uid}/`);
  }
}

/** A duration as Go's time.Duration prints it (`10s`, `1m20s`, `5m0s`, `250ms`), as in upstream's back-off message. */
function goDuration(ms: number): string {
  if (ms <= 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000),
    m = Math.floor((ms % 3_600_000) / 60_000),
    s = (ms % 60_000) / 1000;
  return `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
}

/**
 * Picks up a container's history from the API status after nodelet restarted:
 * finished containers stay finished (init containers are not re-run), and a
 * container that was running died with the previous nodelet process — it is
 * recorded as terminated (exit 137, `ContainerStatusUnknown`, as upstream reports
 * a container it cannot find), so the restart policy decides what happens next.
 */
function resume(rec: ContainerRecord, statuses?: import('@kubernetes/client-node').V1ContainerStatus[]): ContainerRecord {
  const s = statuses?.find((c) => c.name === rec.name);
  if (!s) return rec;
  rec.restartCount = s.restartCount ?? 0;
  const containerID = s.containerID ?? '';
  const t = s.state?.terminated;
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
    const startedAt = new Date(s.state.running.startedAt ?? 0);
    rec.terminated = {
      exitCode: 137,
      reason: 'ContainerStatusUnknown',
      message: 'The container stopped when nodelet restarted',
      startedAt,
      finishedAt: new Date(),
      containerID,
    };
  } else {
    return rec;
  }
  rec.waiting = undefined;
  rec.containerID = containerID || undefined;
  return rec;
}

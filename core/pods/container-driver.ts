/**
 * The container driver (see pod-driver.ts): core runs a container `Provider`'s
 * pod. Starts the containers in order (init containers one by one, then the
 * app containers), pulls images with back-off, applies the restart policy with
 * back-off (CrashLoopBackOff), reads termination messages, and stops the
 * containers on deletion. Never blocks on a running container: exits re-queue
 * the pod.
 *
 * Probes and lifecycle hooks (core/probes, when the root passes a prober):
 * after a start, `postStart` runs (its failure: `FailedPostStartHook`, the
 * container is killed and the restart policy applies), then the run's probes
 * start; a Liveness/Startup failure kills the run (`Killing`: "Container X
 * failed liveness probe, will be restarted") within the probe's
 * `terminationGracePeriodSeconds` or the pod's. Every kill runs `preStop`
 * first, within the grace period (`FailedPreStopHook` on failure).
 *
 *   pod:  Pending ──init done──► app containers start ──► Running
 *           │                                              │ all exited, policy allows no restart
 *           └──init failed (Never) ──► Failed ◄── some failed ┤
 *                                                Succeeded ◄─┘ all exit 0
 */
import type { V1Container, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { isImagePull, isProviderError, type Mount, type PodContext, type Provider, type RunningContainer } from '@nodelet/plugin-api/v1';
import { isStarted, newRecord, type ContainerRecord } from './container-record.ts';
import { targetHost, type ProbeTarget } from '../probes/index.ts';
import { anyAppStarted, computePodStatus, podPhase, specOf } from './pod-status.ts';
import { containerShouldRestart, isSidecar, restartsAfterKill } from './restart-rules.ts';
import { recordView, type RunnerContainer } from './container-view.ts';
import { containerLimits, podQosClass } from './container-limits.ts';
import { terminationMessage } from './termination-message.ts';
import { goDuration, lostRun, resume } from './container-resume.ts';
import type { DriverEnv, PodDriver } from './pod-driver.ts';
import { imagePullPolicy, prefetchPulls, type PrefetchedPull, type PrefetchedPulls } from './image-prefetch.ts';
import { ContainerResizer } from './container-resize.ts';

const fieldPath = (c: ContainerRecord) => `spec.${c.init ? 'initContainers' : 'containers'}{${c.name}}`;
const podRef = (p: V1Pod) => `${p.metadata!.name}_${p.metadata!.namespace}(${p.metadata!.uid})`;
/** The pod's termination grace period (upstream: deletionGracePeriodSeconds, else the spec's, else 30 s). */
const podGraceMs = (p: V1Pod) => Math.max(0, p.metadata?.deletionGracePeriodSeconds ?? p.spec?.terminationGracePeriodSeconds ?? 30) * 1000;
/** Upstream's minimumGracePeriodInSeconds: what a container gets after its preStop used up the grace period. */
const MIN_GRACE_MS = 2000;
/** Under IfNotPresent/Never, a pull still running after this long is announced with a `Pulling` event. */
const PULLING_GRACE_MS = 100;

/** Waits for `turn` at most `graceMs`; answers how long it waited (upstream terminationOrdering.waitForTurn). */
async function waitForTurn(turn: Promise<unknown>, graceMs: number): Promise<number> {
  const t0 = Date.now();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([turn, new Promise((r) => (timer = setTimeout(r, graceMs)))]);
  clearTimeout(timer);
  return Date.now() - t0;
}

/** The container driver of one admitted pod. */
export class ContainerDriver implements PodDriver {
  readonly init: ContainerRecord[];
  readonly app: ContainerRecord[];
  /** The latest pod seen (probes read its IP when they run). */
  private pod: V1Pod;
  /** Resizes running containers whose allocated resources changed (in-place pod resize). */
  private readonly resizer?: ContainerResizer;

  constructor(
    pod: V1Pod,
    readonly provider: Provider,
    private readonly d: DriverEnv,
  ) {
    this.pod = pod;
    const st = pod.status;
    const adoptable = typeof provider.adoptContainer === 'function';
    this.init = (pod.spec?.initContainers ?? []).map((c) => resume(newRecord(c.name, true), st?.initContainerStatuses, adoptable));
    this.app = pod.spec!.containers.map((c) => resume(newRecord(c.name, false), st?.containerStatuses, adoptable));
    if (d.resize) this.resizer = new ContainerResizer(provider, d.resize, d);
  }

  /** A container provider sees the pod context as it is. */
  context(base: PodContext): PodContext {
    return base;
  }

  private get terminating(): boolean {
    return this.d.terminating();
  }

  /** A container's log view (see {@link PodWorker.container}). */
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
      startTime: this.d.startTime,
      sandboxReady: this.d.volumes.isReady,
      now: new Date(),
    });
  }

  /**
   * True when every container has finished for good: the phase is terminal and
   * nothing runs any more (a failed init container makes the phase Failed while
   * the sidecars started before it still run until the next sync stops them).
   */
  finished(pod: V1Pod): boolean {
    const phase = podPhase(pod, this.init, this.app);
    return (phase === 'Succeeded' || phase === 'Failed') && ![...this.init, ...this.app].some((r) => r.running || r.starting);
  }

  /** In-flight pulls and starts run on the pod's signal: abort it now. */
  cancel(): void {
    this.d.abort();
  }

  /** Starts the image pulls of the containers the next `sync` starts first (see image-prefetch.ts). */
  prefetch(pod: V1Pod): PrefetchedPulls | undefined {
    if (this.terminating) return undefined;
    return prefetchPulls(pod, this.init, this.app, {
      credentials: (p) => this.d.setup.credentials(p),
      pull: (image, pullPolicy, credentials) => this.provider.pullImage(image, { pullPolicy, credentials }, this.d.ctx()),
    });
  }

  /**
   * Starts init containers one by one, then the app containers, under the
   * restart rules; returns quickly. Upstream computeInitContainerActions and
   * computePodActions, for sidecars (init containers with `restartPolicy:
   * Always`): a sidecar is started in its turn and the next init container
   * waits until it has started (its startup probe, if any, succeeded); it is
   * started again whenever it exits, until the app containers have all ended
   * for good; then the sidecars are stopped, the last one first.
   */
  async sync(pod: V1Pod, prefetched?: PrefetchedPulls): Promise<void> {
    this.pod = pod;
    await this.adopt(pod);
    this.resizer?.sync(pod, [...this.init, ...this.app], (rec, spec, why) => this.restartForResize(pod, spec, rec, why));
    const initialized = anyAppStarted(this.app);
    if (initialized && this.appDone(pod)) return this.stopSidecars(pod);
    const starts: Promise<void>[] = [];
    for (const rec of this.init) {
      const spec = specOf(pod, rec)!;
      if (isSidecar(spec)) {
        if (!rec.running && !rec.starting) {
          const start = this.maybeStart(pod, spec, rec, prefetched?.get(rec.name));
          // Before the pod is initialized the next init container waits for this start; after it, a
          // sidecar's restart runs beside the app containers'.
          if (initialized) starts.push(start);
          else await start;
        }
        if (!initialized && !isStarted(rec)) return;
        continue;
      }
      if (initialized) continue; // a regular init container runs only before the app containers
      if (rec.running || rec.starting) return;
      if (rec.terminated?.exitCode === 0) continue;
      if (rec.terminated && !this.shouldRestart(pod, rec)) return this.stopSidecars(pod); // the pod failed
      await this.maybeStart(pod, spec, rec, prefetched?.get(rec.name));
      return;
    }
    for (const rec of this.app) {
      const spec = specOf(pod, rec)!;
      if (rec.running || rec.starting) continue;
      if (rec.terminated && !this.shouldRestart(pod, rec)) continue;
      starts.push(this.maybeStart(pod, spec, rec, prefetched?.get(rec.name)));
    }
    await Promise.all(starts);
  }

  private shouldRestart(pod: V1Pod, rec: ContainerRecord): boolean {
    if (rec.resizeRestart) return true;
    return containerShouldRestart(specOf(pod, rec), pod.spec, rec.terminated!.exitCode);
  }

  /** Upstream's `keepCount == 0 && no containers to start`: every app container has ended and none restarts. */
  private appDone(pod: V1Pod): boolean {
    return this.app.every((r) => !r.running && !r.starting && r.terminated !== undefined && !this.shouldRestart(pod, r));
  }

  /** The app containers have all ended for good: stops the running sidecars, the last one first (upstream killPodWithSyncResult). */
  private async stopSidecars(pod: V1Pod): Promise<void> {
    if (this.init.some((r) => r.running && isSidecar(specOf(pod, r)))) await this.stopInOrder(pod, podGraceMs(pod));
  }

  /** Starts `rec` unless a restart back-off is in force. */
  private async maybeStart(pod: V1Pod, spec: V1Container, rec: ContainerRecord, prefetched?: PrefetchedPull): Promise<void> {
    if (rec.terminated) {
      const key = this.key(rec, pod);
      const left = this.d.backoff.restart.remaining(key, rec.terminated.finishedAt.getTime());
      if (left > 0) {
        const delay = goDuration(this.d.backoff.restart.delay(key));
        rec.waiting = { reason: 'CrashLoopBackOff', message: `back-off ${delay} restarting failed container=${rec.name} pod=${podRef(pod)}` };
        this.d.event('Warning', 'BackOff', `Back-off restarting failed container ${rec.name} in pod ${podRef(pod)}`, fieldPath(rec));
        this.d.requeue(left);
        return;
      }
      this.d.backoff.restart.next(key);
    }
    rec.starting = true;
    try {
      await this.start(pod, spec, rec, prefetched);
    } finally {
      rec.starting = false;
    }
  }

  /** Pulls `spec`'s image (or awaits the pull prefetched for it, when it is still the same image). */
  private async pull(pod: V1Pod, spec: V1Container, rec: ContainerRecord, prefetched?: PrefetchedPull): Promise<boolean> {
    const image = spec.image ?? '';
    const key = `${this.key(rec, pod)}/image`;
    const left =
      rec.waiting?.reason === 'ErrImagePull' || rec.waiting?.reason === 'ImagePullBackOff' ? this.d.backoff.pull.remaining(key, rec.pullFailedAt ?? 0) : 0;
    if (left > 0) {
      rec.waiting = { reason: 'ImagePullBackOff', message: `Back-off pulling image "${image}": ${rec.pullError ?? ''}` };
      this.d.event('Normal', 'BackOff', `Back-off pulling image "${image}"`, fieldPath(rec));
      this.d.event('Warning', 'Failed', 'Error: ImagePullBackOff', fieldPath(rec));
      this.d.requeue(left);
      return false;
    }
    const policy = imagePullPolicy(spec);
    const early = prefetched?.image === image ? prefetched : undefined;
    const t0 = early?.startedAt ?? Date.now();
    // Upstream posts Pulling only when it pulls: always under `Always`; otherwise only when the image
    // is not present. The provider answers both in one call, so under IfNotPresent/Never `Pulling`
    // is posted once the pull turns out to be real (took longer than PULLING_GRACE_MS, or was not cached).
    let pulling = false;
    const announce = () => {
      if (pulling) return;
      pulling = true;
      this.d.event('Normal', 'Pulling', `Pulling image "${image}"`, fieldPath(rec));
    };
    const slow = policy === 'Always' ? (announce(), undefined) : setTimeout(announce, PULLING_GRACE_MS);
    try {
      const pulled = early
        ? early.result
        : this.d.setup.credentials(pod).then((credentials) => this.provider.pullImage(image, { pullPolicy: policy, credentials }, this.d.ctx()));
      rec.image = await pulled.finally(() => clearTimeout(slow));
      if (!rec.image.cached) announce();
      const secs = ((Date.now() - t0) / 1000).toFixed(3);
      this.d.event(
        'Normal',
        'Pulled',
        rec.image.cached
          ? `Container image "${image}" already present on machine`
          : `Successfully pulled image "${image}" in ${secs}s. Image size: ${rec.image.size} bytes.`,
        fieldPath(rec),
      );
      this.d.backoff.pull.reset(key);
      return true;
    } catch (e) {
      clearTimeout(slow);
      if (this.terminating) return false; // aborted because the pod is being deleted
      announce(); // a failed pull was a pull (upstream posts Pulling before Failed)
      const msg = (e as Error).message;
      rec.waiting = { reason: 'ErrImagePull', message: msg };
      rec.pullError = msg;
      rec.pullFailedAt = Date.now();
      this.d.event('Warning', 'Failed', `Failed to pull image "${image}": ${msg}`, fieldPath(rec));
      this.d.event('Warning', 'Failed', 'Error: ErrImagePull', fieldPath(rec));
      // Sync again at once so the back-off shows as ImagePullBackOff (the next pull waits for it).
      this.d.backoff.pull.next(key);
      this.d.requeue(0);
      return false;
    }
  }

  private async start(pod: V1Pod, spec: V1Container, rec: ContainerRecord, prefetched?: PrefetchedPull): Promise<void> {
    if (this.terminating) return;
    if (!(await this.pull(pod, spec, rec, prefetched))) return;
    if (this.terminating) return;
    const restartCount = rec.terminated || rec.last ? rec.restartCount + 1 : rec.restartCount;
    let config;
    try {
      const env = await this.d.setup.env(pod, spec);
      config = { env, argv: this.d.setup.argv(spec, env), mounts: await this.d.setup.mounts(pod, spec, this.d.volumes.prepared, env) };
    } catch (e) {
      // A mount's own reason wins: an image volume not pulled (ErrImagePull, ImagePullBackOff; the event
      // says the reason, as upstream's), its subPath missing (CreateContainerError).
      const reason = isProviderError(e) ? e.reason : 'CreateContainerConfigError';
      return this.startFailed(pod, rec, reason, (e as Error).message, isImagePull(e) ? reason : undefined);
    }
    const id = `${pod.metadata!.uid!.slice(0, 8)}-${rec.name}-${restartCount}-${Date.now().toString(36)}`;
    const logPath = this.d.setup.logPath(pod, rec.name, restartCount);
    try {
      const running = await this.provider.startContainer(
        {
          id,
          pod: { namespace: pod.metadata!.namespace!, name: pod.metadata!.name!, uid: pod.metadata!.uid!, annotations: pod.metadata!.annotations ?? {} },
          name: rec.name,
          image: rec.image!,
          ...config,
          workingDir: spec.workingDir,
          restartCount,
          ports: (spec.ports ?? []).map((p) => ({ name: p.name, containerPort: p.containerPort, protocol: (p.protocol ?? 'TCP') as 'TCP' | 'UDP' | 'SCTP' })),
          network: { podIPs: (pod.status?.podIPs ?? []).map((a) => a.ip), hostNetwork: pod.spec?.hostNetwork === true },
          limits: containerLimits(spec),
          qosClass: podQosClass(pod),
          logPath,
          stdin: spec.stdin === true,
        },
        this.d.ctx(),
      );
      this.resizer?.started(pod, spec);
      this.d.event('Normal', 'Created', `Created container: ${rec.name}`, fieldPath(rec));
      this.d.event('Normal', 'Started', `Started container ${rec.name}`, fieldPath(rec));
      this.onStarted(pod, rec, running, restartCount, { spec, mounts: config.mounts, logPath });
    } catch (e) {
      if (this.terminating) return; // aborted because the pod is being deleted
      const reason = isProviderError(e) ? 'CreateContainerError' : 'RunContainerError';
      return this.startFailed(pod, rec, reason, (e as Error).message);
    }
    await this.afterStart(pod, spec, rec);
  }

  /** Re-adopts every run marked by `resume` (see {@link PodDriver.adopt}). */
  async adopt(pod: V1Pod): Promise<void> {
    const adopting = [...this.init, ...this.app].filter((r) => r.adopt);
    if (adopting.length > 0) await Promise.all(adopting.map((rec) => this.adoptRun(pod, rec)));
  }

  /**
   * Re-adopts a run that the previous nodelet process started and the provider
   * kept (see container-resume.ts): same container ID, restart count and log
   * file, no Created/Started events, no postStart; its probes start again. A
   * run the provider does not know ended with the previous process
   * (`ContainerStatusUnknown`/137) and the restart policy applies.
   */
  private async adoptRun(pod: V1Pod, rec: ContainerRecord): Promise<void> {
    const a = rec.adopt!;
    rec.adopt = undefined;
    const spec = (rec.init ? pod.spec?.initContainers : pod.spec?.containers)?.find((c) => c.name === rec.name);
    const id = a.containerID.replace(/^[^:]*:\/\//, '');
    const log = this.d.ctx().log;
    let running: RunningContainer | undefined;
    try {
      running = spec ? await this.provider.adoptContainer!(id, this.d.ctx()) : undefined;
    } catch (e) {
      log.warn({ container: rec.name, id, err: (e as Error).message }, 'could not re-adopt the container');
    }
    if (!running || !spec) {
      rec.waiting = undefined;
      rec.containerID = a.containerID;
      rec.terminated = lostRun(a.containerID, a.startedAt, 'The container could not be located when nodelet restarted');
      return;
    }
    // Only the termination message (terminationMessagePath in a volume) needs the mounts: resolved at exit,
    // when the volumes have been re-synced.
    const mounts = async () => this.d.setup.mounts(pod, spec, this.d.volumes.prepared, await this.d.setup.env(pod, spec));
    const logPath = this.d.setup.logPath(pod, rec.name, rec.restartCount);
    this.onStarted(pod, rec, running, rec.restartCount, { spec, mounts, logPath });
    log.info({ container: rec.name, id, restartCount: rec.restartCount }, 're-adopted running container');
    await this.afterStart(pod, spec, rec, true);
  }

  /** What probes and hooks of `spec`'s current run reach: the pod's address (read when they run), its ports, the provider's exec. */
  private target(spec: V1Container, running: RunningContainer): ProbeTarget {
    const provider = this.provider;
    const currentPod = () => this.pod;
    return {
      get host() {
        return targetHost(currentPod());
      },
      ports: spec.ports ?? [],
      providerName: provider.name,
      exec: provider.exec ? (command, timeoutMs, signal) => provider.exec!(running.id, command, { timeoutMs, signal }) : undefined,
    };
  }

  /** postStart, then the run's probes (upstream: the hook runs before the start is done; a failure kills the container). */
  private async afterStart(pod: V1Pod, spec: V1Container, rec: ContainerRecord, adopted = false): Promise<void> {
    const probes = this.d.probes;
    const running = rec.running;
    if (!probes || !running) return;
    const target = this.target(spec, running);
    const hook = adopted ? undefined : spec.lifecycle?.postStart;
    if (hook) {
      const failed = await probes.hook(hook, pod, spec, target, podGraceMs(pod));
      if (rec.running !== running) return;
      if (failed !== undefined) {
        this.d.event('Warning', 'FailedPostStartHook', failed, fieldPath(rec));
        await this.kill(pod, spec, rec, podGraceMs(pod), 'FailedPostStartHook');
        return;
      }
    }
    if (this.terminating || rec.running !== running || rec.killing) return;
    const m = pod.metadata!;
    rec.probes = probes.watch(
      { container: spec, startedAt: running.startedAt, target, series: { container: rec.name, pod: m.name!, namespace: m.namespace!, pod_uid: m.uid! } },
      {
        changed: () => {
          this.d.statusChanged();
          // a sidecar that has just started lets the next init container start
          if (rec.init) this.d.requeue(0);
        },
        event: (type, reason, message) => this.d.event(type, reason, message, fieldPath(rec)),
        kill: (kind, _output, graceMs) => {
          if (rec.running !== running) return;
          // upstream computeInitContainerActions / computePodActions name the kill so
          const why = rec.init
            ? `Init container ${rec.name} failed ${kind.toLowerCase()} probe`
            : `Container ${rec.name} failed ${kind.toLowerCase()} probe${restartsAfterKill(spec, this.pod.spec) ? ', will be restarted' : ''}`;
          void this.kill(this.pod, spec, rec, graceMs ?? podGraceMs(this.pod), why);
        },
      },
    );
  }

  /**
   * Kills the current run of `rec` (upstream killContainer): `Killing` with
   * `message`, its probes stopped, `preStop` within `graceMs`, then the
   * provider's stop with what is left of the grace (at least 2 s after a
   * preStop). With `turn` (a sidecar stopping with its pod), the stop waits
   * for it first, within what is left of the grace. The exit handler records
   * the end; the restart rules decide.
   */
  private async kill(
    pod: V1Pod,
    spec: V1Container | undefined,
    rec: ContainerRecord,
    graceMs: number,
    message: string,
    turn?: Promise<unknown>,
  ): Promise<void> {
    const running = rec.running;
    if (!running || rec.killing) return;
    rec.killing = true;
    rec.probes?.stop();
    this.d.event('Normal', 'Killing', message, fieldPath(rec));
    let grace = graceMs;
    const preStop = spec?.lifecycle?.preStop;
    if (spec && preStop && this.d.probes && graceMs > 0) {
      const t0 = Date.now();
      const failed = await this.d.probes.hook(preStop, pod, spec, this.target(spec, running), graceMs);
      if (failed !== undefined) {
        this.d.ctx().log.warn({ container: rec.name, err: failed }, 'PreStop hook failed');
        // upstream: the detail stays out of the event so that secrets do not leak.
        this.d.event('Warning', 'FailedPreStopHook', 'PreStopHook failed', fieldPath(rec));
      }
      grace = Math.max(graceMs - (Date.now() - t0), MIN_GRACE_MS);
    }
    if (turn && grace > 0) grace = Math.max(grace - (await waitForTurn(turn, grace)), MIN_GRACE_MS);
    await running.stop(grace);
    // The exit handler reads the termination message (an adopted run resolves its mounts first):
    // the status posted after this stop must show the termination, not the run.
    await rec.recorded;
  }

  /** A resize of `rec` needs a restart (`RestartContainer`): killed now, started again with the new resources by the sync its exit queues. */
  private restartForResize(pod: V1Pod, spec: V1Container, rec: ContainerRecord, message: string): void {
    rec.resizeRestart = true;
    void this.kill(pod, spec, rec, podGraceMs(pod), message);
  }

  private startFailed(pod: V1Pod, rec: ContainerRecord, reason: string, message: string, note = message): void {
    rec.waiting = { reason, message };
    this.d.event('Warning', 'Failed', `Error: ${note}`, fieldPath(rec));
    this.d.requeue(this.d.backoff.restart.next(`${this.key(rec, pod)}/create`));
  }

  private onStarted(
    _pod: V1Pod,
    rec: ContainerRecord,
    running: RunningContainer,
    restartCount: number,
    run: { spec: V1Container; mounts: Mount[] | (() => Promise<Mount[]>); logPath: string },
  ): void {
    if (rec.terminated) rec.last = rec.terminated;
    rec.terminated = undefined;
    rec.waiting = undefined;
    rec.resizeRestart = undefined;
    rec.running = running;
    rec.restartCount = restartCount;
    rec.startedAt = running.startedAt;
    rec.containerID = `${this.provider.name}://${running.id}`;
    rec.recorded = running.exit.then(async (x) => {
      if (rec.running === running) {
        rec.probes?.stop();
        rec.probes = undefined;
        rec.killing = false;
      }
      const mounts = typeof run.mounts === 'function' ? await run.mounts().catch(() => []) : run.mounts;
      const message = await terminationMessage(run.spec, x, mounts, run.logPath).catch(() => x.message);
      rec.running = undefined;
      rec.terminated = { ...x, message, startedAt: running.startedAt, containerID: rec.containerID! };
      this.d.requeue(0);
    });
  }

  /** Stops every running container within `graceMs` (emitting `Killing`), sidecars after the app containers. */
  async stop(pod: V1Pod, graceMs: number): Promise<void> {
    for (const r of [...this.init, ...this.app]) r.resizeRestart = undefined; // stopped for good: no restart for a resize
    await this.stopInOrder(pod.spec?.containers?.length ? pod : this.pod, graceMs);
    const m = this.pod.metadata!;
    this.d.probes?.forgetPod(
      { name: m.name!, namespace: m.namespace!, uid: m.uid! },
      [...this.init, ...this.app].map((r) => r.name),
    );
  }

  /**
   * Stops every running container within `graceMs` in upstream's termination
   * order (kuberuntime_termination_order.go): every kill starts at once
   * (`Killing`, then `preStop`); an app container or a regular init container
   * is then stopped; a sidecar first waits, within what is left of its grace,
   * until every app container and the sidecars after it have stopped.
   */
  private async stopInOrder(pod: V1Pod, graceMs: number): Promise<void> {
    const live = [...this.init, ...this.app].filter((r) => r.running);
    const done = new Map(
      live.map((r) => {
        let resolve!: () => void;
        const promise = new Promise<void>((ok) => (resolve = ok));
        return [r, { promise, resolve }] as const;
      }),
    );
    const appStopped = this.app.filter((r) => done.has(r)).map((r) => done.get(r)!.promise);
    let later: Promise<void> | undefined; // the stop of the next sidecar in spec order
    const turns = new Map<ContainerRecord, Promise<unknown>>();
    for (const rec of [...this.init].reverse()) {
      if (!isSidecar(specOf(pod, rec))) continue;
      turns.set(rec, Promise.all([...appStopped, ...(later ? [later] : [])]));
      if (done.has(rec)) later = done.get(rec)!.promise;
    }
    await Promise.all(
      live.map(async (rec) => {
        try {
          if (rec.killing) await rec.running?.stop(graceMs);
          else await this.kill(pod, specOf(this.pod, rec) ?? specOf(pod, rec), rec, graceMs, `Stopping container ${rec.name}`, turns.get(rec));
        } finally {
          done.get(rec)!.resolve();
        }
      }),
    );
  }
}

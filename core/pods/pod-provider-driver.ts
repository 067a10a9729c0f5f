/**
 * The `PodProvider` driver (see pod-driver.ts), a pass-through for a provider
 * that owns whole pods: after the worker prepared the volumes, it hands the
 * pod over once (`createPod`), forwards changes of its mutable fields
 * (`updatePod`), posts what `getPodStatus` reports (provider-reports.ts), and asks the provider to stop the pod on deletion (`deletePod`).
 * Its context adds `resolveContainer`, `logPath` and `statusChanged` (a
 * status-only sync, decided in the worker).
 *
 *   new ──sync (volumes ready)──► createPod ──► created ──spec change──► updatePod
 *    ▲                               │    │          │ statusChanged() ──► worker re-queues ──► getPodStatus ──► post
 *    │                               │    │          └─ stop ──► deletePod(grace) ─(grace over)─► abort signal
 *    │                               │    └─ InvalidArgument/NotSupported ──► Failed (UnsupportedPodSpec), no retry
 *    └── back-off ◄──────────────────┘ ImagePull/InvalidImage: ErrImagePull ─► ImagePullBackOff
 *                                       other errors: FailedCreatePodSandBox (containers ContainerCreating)
 */
import type { V1Container, V1Pod, V1PodStatus } from '@kubernetes/client-node';
import {
  isImagePull,
  isInvalidArgument,
  isInvalidImage,
  isNotFound,
  isNotSupported,
  isProviderError,
  providerError,
  type PodContext,
  type PodLifecycleContext,
  type PodProvider,
  type PodStatusReport,
  type ResolvedContainer,
} from '@nodelet/plugin-api/v1';
import type { RunnerContainer } from './container-view.ts';
import type { DriverEnv, PodDriver } from './pod-driver.ts';
import { containerLimits } from './container-limits.ts';
import { toPodObject } from './pod-object.ts';
import { mutableFingerprint } from './pod-changes.ts';
import { isTerminalPhase, statusFromReport } from './pod-status-report.ts';
import { ProviderReports } from './provider-reports.ts';

/** The pod reason when a provider refuses a pod for good (InvalidArgument/NotSupported without a reason of its own). */
const UNSUPPORTED_POD_SPEC = 'UnsupportedPodSpec';

type Verdict = { failed: true; reason: string; message: string } | { failed: false; reason: string; message?: string };

const msg = (e: unknown) => (e instanceof Error ? e.message : String(e));
/** The reason a provider gave explicitly (not just its code). */
const ownReason = (e: unknown) => (isProviderError(e) && e.reason && e.reason !== e.code ? e.reason : undefined);

/** How long `deletePod` may run after the grace period (when the pod's signal is aborted) before core gives up. */
const KILL_SLACK_MS = 10_000;

/** The driver of one pod owned by a {@link PodProvider}. */
export class PodProviderDriver implements PodDriver {
  private pod: V1Pod;
  private ctx?: PodLifecycleContext;
  private created = false;
  private attempted = false;
  private verdict?: Verdict;
  private failedAt = 0;
  private pullError?: string;
  private fingerprint = '';
  private deleting = false;
  private readonly reports: ProviderReports;

  constructor(
    pod: V1Pod,
    readonly provider: PodProvider,
    private readonly d: DriverEnv,
    /** How long `deletePod` may run after the grace period before core gives up (`FailedKillPod`). */
    private readonly killSlackMs = KILL_SLACK_MS,
  ) {
    this.pod = pod;
    this.reports = new ProviderReports({
      provider,
      event: d.event,
      log: () => this.ctx?.log,
      terminating: () => d.terminating(),
      statusChanged: () => d.statusChanged(),
    });
  }

  private get uid(): string {
    return this.pod.metadata!.uid!;
  }

  /** Creates the pod once, then forwards changes of its mutable fields. Returns quickly. */
  async sync(pod: V1Pod): Promise<void> {
    if (this.verdict?.failed) return;
    this.pod = pod;
    if (!this.created) return this.create(pod);
    return this.update(pod);
  }

  /** The pod context plus what a pod provider resolves through core. */
  context(base: PodContext): PodLifecycleContext {
    this.ctx = {
      ...base,
      resolveContainer: (name) => this.resolveContainer(name),
      logPath: (name, restartCount) => this.logPath(name, restartCount),
      statusChanged: () => this.d.statusChanged(),
    };
    return this.ctx;
  }

  /** The pod's signal means "the grace period is over" to a pod provider: deletion does not abort it early. */
  cancel(): void {}

  private async create(pod: V1Pod): Promise<void> {
    const key = `${this.uid}/create`;
    const left = this.failedAt ? this.d.backoff.restart.remaining(key, this.failedAt) : 0;
    if (left > 0) {
      if (this.pullError !== undefined) {
        this.verdict = { failed: false, reason: 'ImagePullBackOff', message: `Back-off pulling image: ${this.pullError}` };
        this.d.event('Normal', 'BackOff', 'Back-off pulling image');
        this.d.event('Warning', 'Failed', 'Error: ImagePullBackOff');
      }
      this.d.requeue(left);
      return;
    }
    this.attempted = true;
    this.fingerprint = mutableFingerprint(pod);
    try {
      await this.provider.pods.createPod(toPodObject(pod), this.ctx!);
    } catch (e) {
      return this.createFailed(e, key);
    }
    this.created = true;
    this.verdict = this.pullError = undefined;
    this.d.backoff.restart.reset(key);
  }

  /** Maps a createPod failure to a precise status and event (see the sketch at the top). */
  private createFailed(e: unknown, key: string): void {
    const text = msg(e);
    if (isInvalidArgument(e) || isNotSupported(e)) {
      const reason = ownReason(e) ?? UNSUPPORTED_POD_SPEC;
      const message = `provider "${this.provider.name}" cannot run this pod: ${text}`;
      this.verdict = { failed: true, reason, message };
      this.d.event('Warning', reason, message);
      return;
    }
    this.failedAt = Date.now();
    const delay = this.d.backoff.restart.next(key, this.failedAt);
    this.pullError = undefined;
    if (isImagePull(e) || isInvalidImage(e)) {
      this.pullError = text;
      this.verdict = { failed: false, reason: ownReason(e) ?? 'ErrImagePull', message: text };
      this.d.event('Warning', 'Failed', `Failed to pull image: ${text}`);
      this.d.event('Warning', 'Failed', `Error: ${this.verdict.reason}`);
      this.d.requeue(0); // shows ImagePullBackOff at once; the next attempt waits for the back-off
      return;
    }
    if (!isProviderError(e)) this.ctx!.log.error({ err: text }, `provider "${this.provider.name}" threw an unbranded error from createPod`);
    this.verdict = { failed: false, reason: ownReason(e) ?? 'ContainerCreating', message: ownReason(e) ? text : undefined };
    this.d.event('Warning', 'FailedCreatePodSandBox', `Failed to create pod sandbox: ${text}`);
    this.d.requeue(delay);
  }

  private async update(pod: V1Pod): Promise<void> {
    const fp = mutableFingerprint(pod);
    if (fp === this.fingerprint) return;
    const updatePod = this.provider.pods.updatePod?.bind(this.provider.pods);
    if (!updatePod) {
      this.fingerprint = fp;
      return;
    }
    try {
      await updatePod(toPodObject(pod), this.ctx!);
      this.fingerprint = fp;
      this.d.backoff.restart.reset(`${this.uid}/update`);
    } catch (e) {
      if (isNotSupported(e)) {
        this.fingerprint = fp;
        return;
      }
      this.d.event('Warning', 'FailedUpdate', `Failed to update the pod on provider "${this.provider.name}": ${msg(e)}`);
      this.d.requeue(this.d.backoff.restart.next(`${this.uid}/update`));
    }
  }

  private specOf(name: string): { spec: V1Container; init: boolean } | undefined {
    const init = this.pod.spec?.initContainers?.find((c) => c.name === name);
    if (init) return { spec: init, init: true };
    const app = this.pod.spec?.containers.find((c) => c.name === name);
    return app ? { spec: app, init: false } : undefined;
  }

  private async resolveContainer(name: string): Promise<ResolvedContainer> {
    const found = this.specOf(name);
    if (!found) throw providerError('NotFound', `pod ${this.pod.metadata!.namespace}/${this.pod.metadata!.name} has no container "${name}"`);
    const { spec, init } = found;
    try {
      const env = await this.d.setup.env(this.pod, spec);
      const argv = this.d.setup.argv(spec, env);
      const mounts = await this.d.setup.mounts(this.pod, spec, this.d.volumes.prepared, env);
      return { name, image: spec.image ?? '', argv, env, mounts, limits: containerLimits(spec), workingDir: spec.workingDir };
    } catch (e) {
      this.d.event('Warning', 'Failed', `Error: ${msg(e)}`, `spec.${init ? 'initContainers' : 'containers'}{${name}}`);
      throw providerError('InvalidArgument', msg(e), { reason: isProviderError(e) ? e.reason : 'CreateContainerConfigError', cause: e });
    }
  }

  private logPath(name: string, restartCount: number): string {
    if (!this.specOf(name)) throw providerError('NotFound', `pod ${this.pod.metadata!.name} has no container "${name}"`);
    if (!Number.isInteger(restartCount) || restartCount < 0)
      throw providerError('InvalidArgument', `restartCount must be a non-negative integer, got ${restartCount}`);
    return this.d.setup.logPath(this.pod, name, restartCount);
  }

  /** The provider's current report (validated), or the last good one; undefined until the pod was created. */
  private report(): PodStatusReport | undefined {
    if (!this.created) return undefined;
    return this.reports.read({ namespace: this.pod.metadata!.namespace!, name: this.pod.metadata!.name!, uid: this.uid });
  }

  /** The pod status to post. */
  status(pod: V1Pod): V1PodStatus {
    const r = this.report();
    const v = this.verdict;
    const report: PodStatusReport = v?.failed ? { phase: 'Failed', reason: v.reason, message: v.message } : (r ?? { phase: 'Pending' });
    return statusFromReport({
      pod: pod.spec?.containers?.length ? pod : this.pod,
      report,
      hostIP: this.d.hostIP,
      startTime: this.d.startTime,
      sandboxReady: this.created && this.d.volumes.isReady,
      now: new Date(),
      unreported: v ? { reason: v.reason, message: v.message } : undefined,
      lastTermination: (name, init, cur) => this.reports.lastTermination(name, init, cur),
    });
  }

  /** True when the provider reports Succeeded/Failed, or the provider refused the pod for good. */
  finished(_pod: V1Pod): boolean {
    return this.verdict?.failed === true || isTerminalPhase(this.report()?.phase);
  }

  /** A container's log view: its latest reported run (undefined until it has run). */
  container(name: string): RunnerContainer | undefined {
    return this.reports.container(name);
  }

  /**
   * Asks the provider to delete the pod within `graceMs` (once; a pod never
   * created is not deleted); once the grace period is over the pod's signal is
   * aborted, and after `killSlackMs` more core stops waiting (`FailedKillPod`).
   * Never rejects.
   */
  async stop(pod: V1Pod, graceMs: number): Promise<void> {
    if (this.deleting) return;
    this.deleting = true;
    const target = pod.spec?.containers?.length ? pod : this.pod;
    if (this.attempted) {
      for (const c of this.reports.last?.containers ?? []) {
        if ('running' in c.state) this.d.event('Normal', 'Killing', `Stopping container ${c.name}`, `spec.containers{${c.name}}`);
      }
      await this.deleteWithDeadline(target, graceMs);
      this.report();
    }
  }

  private async deleteWithDeadline(pod: V1Pod, graceMs: number): Promise<void> {
    const slack = this.killSlackMs;
    let kill: NodeJS.Timeout | undefined, giveUp: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      kill = setTimeout(() => {
        this.d.abort();
        giveUp = setTimeout(() => resolve('timeout'), slack);
      }, graceMs);
    });
    try {
      const r = await Promise.race([this.provider.pods.deletePod(toPodObject(pod), this.ctx!, graceMs).then(() => 'done' as const), timedOut]);
      if (r === 'timeout')
        this.d.event('Warning', 'FailedKillPod', `error killing pod: provider "${this.provider.name}" did not delete the pod within ${graceMs + slack}ms`);
    } catch (e) {
      if (!isNotFound(e)) this.d.event('Warning', 'FailedKillPod', `error killing pod: ${msg(e)}`);
    } finally {
      clearTimeout(kill);
      clearTimeout(giveUp);
    }
  }
}

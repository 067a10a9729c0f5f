/**
 * The one per-pod path, for both provider kinds (virtual-kubelet's
 * `node/sync.go` `syncProviderWrapper`): the provider is adapted to a
 * pod-level {@link PodDriver} once, here at the boundary, and this worker runs
 * every pod. It owns what every pod shares — the pod context and its abort
 * signal, cancel on deletion, the volumes (`PodVolumes`, one re-sync cadence:
 * its header says why), termination, back-off clean-up and status-only
 * syncs — and asks the driver for the provider-specific steps
 * (`ContainerDriver`: containers, restarts, pulls; `PodProviderDriver`:
 * createPod/updatePod/deletePod and reports).
 *
 * Pod IPs (upstream's sandbox): `hostNetwork` pods get the host IP, others ask
 * the {@link PodNetwork}; the pod handed to the driver carries them in
 * `status.podIPs` (env, `ContainerSpec.network`), and {@link PodWorker.status}
 * reports them. A new pod's volumes are set up while its IPs are (upstream
 * mounts volumes before it makes the sandbox), unless a downward API volume
 * shows the IPs: then they wait for them. Its image pulls start then too
 * (`driver.prefetch`, image-prefetch.ts): that reconcile's `driver.sync`
 * awaits them instead of pulling after the volumes.
 *
 * The same for both kinds:
 * - `cancel()` (the pod got a deletionTimestamp): the worker starts nothing new
 *   (no container start, no `createPod`/`updatePod`) for either kind; the
 *   driver aborts what is in flight. A container driver aborts the pod's
 *   signal (in-flight pulls and starts); a pod provider's signal keeps its
 *   contract — "the grace period is over" — so `deletePod` still gets its grace.
 * - Status-only syncs: `statusChanged()` (a `PodProvider` reporting a change)
 *   re-queues the pod and skips the volume re-sync of that one wake once the
 *   volumes were set up — the periodic cadence covers them. Either kind may
 *   ask; only pod providers have a way to ask (`PodProvider.statusChanged`).
 * - Back-offs: one set for all pods ({@link PodBackoffs}), every key under
 *   `<uid>/`; `terminate` frees the pod's keys in all three.
 *
 *   new ──sync: make context──► pod IPs (once) ──► volumes ──ready──► driver.sync ──► (re-queued by exits,
 *    │                 │ first:   │ no IP yet:       │ FailedMount, back-off           back-offs, statusChanged)
 *    │                 └ volumes ─┤ FailedCreate-    └──► retry later                      │ statusChanged: skip volumes once
 *    │          (alongside, unless│ PodSandBox, retry after back-off
 *    │        a volume shows IPs) └ (volumes: that first set-up awaited, not a second one)
 *    ├── cancel() (deletion) ──► terminating: nothing new starts; driver.cancel()
 *    └── terminate(grace) ──► terminating ──► driver.stop(grace) ──► abort signal ──► free back-offs
 *
 * After a nodelet restart, `driver.adopt` runs between the pod IPs and the volumes: containers a
 * provider kept (`keepsContainers`) are re-adopted without waiting for the volume re-sync.
 */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import { isPodProvider, type AnyProvider, type PodContext } from '@nodelet/plugin-api/v1';
import type { PodSetup } from './pod-setup.ts';
import type { RunnerContainer } from './container-view.ts';
import { PodVolumes } from './pod-volumes.ts';
import type { DriverEnv, PodBackoffs, PodDriver } from './pod-driver.ts';
import { ContainerDriver } from './container-driver.ts';
import { PodProviderDriver } from './pod-provider-driver.ts';
import { volumesShowPodIPs, withPodIPs, type PodNetwork } from './pod-network.ts';
import type { ProbeManager } from '../probes/index.ts';
import type { ResizeActuation } from './pod-allocation.ts';

/** Shared services of all pod workers. */
export interface PodWorkerDeps {
  /** The provider the pod was routed to (either kind). */
  provider: AnyProvider;
  setup: PodSetup;
  hostIP: string;
  backoff: PodBackoffs;
  /** Re-queues the pod's key after `ms`. */
  requeue(ms: number): void;
  /** Creates the per-pod context handed to the provider. */
  context(pod: V1Pod, signal: AbortSignal): PodContext;
  /** Records an event on the pod; `fieldPath` like `spec.containers{name}`. */
  event(type: 'Normal' | 'Warning', reason: string, note: string, fieldPath?: string): void;
  /** Pod IPs (none: pods get no IP; `hostNetwork` pods get `hostIP` either way). */
  network?: PodNetwork;
  /** Pod providers: how long `deletePod` may run past the grace period (default 10 s). */
  killSlackMs?: number;
  /** The node's prober (container providers' probes and lifecycle hooks). */
  probes?: ProbeManager;
  /** In-place pod resize of container providers' running containers (pod-allocation.ts). */
  resize?: ResizeActuation;
}

/** The state and behaviour of one admitted pod, whatever runs it. */
export class PodWorker {
  private readonly driver: PodDriver;
  private readonly volumes: PodVolumes;
  private readonly abort = new AbortController();
  private ctx?: PodContext;
  private terminating = false;
  private statusOnly = false;
  /** The pod's IPs once its network is set up (`[hostIP]` for hostNetwork pods). */
  private ips?: string[];

  constructor(
    pod: V1Pod,
    private readonly d: PodWorkerDeps,
  ) {
    this.volumes = new PodVolumes({ setup: d.setup, backoff: d.backoff.volume, requeue: (ms) => d.requeue(ms), event: (t, r, n) => d.event(t, r, n) });
    const env: DriverEnv = {
      setup: d.setup,
      hostIP: d.hostIP,
      backoff: d.backoff,
      volumes: this.volumes,
      startTime: pod.status?.startTime ? new Date(pod.status.startTime) : new Date(),
      requeue: (ms) => d.requeue(ms),
      event: (type, reason, note, fieldPath) => d.event(type, reason, note, fieldPath),
      ctx: () => this.ctx!,
      terminating: () => this.terminating,
      abort: () => this.abort.abort(),
      statusChanged: () => this.statusChanged(),
      probes: d.probes,
      resize: d.resize,
    };
    this.driver = isPodProvider(d.provider) ? new PodProviderDriver(pod, d.provider, env, d.killSlackMs) : new ContainerDriver(pod, d.provider, env);
  }

  /** The provider running this pod. */
  get provider(): AnyProvider {
    return this.driver.provider;
  }

  /** Converges the pod towards its spec; returns quickly (never waits for containers to end). */
  async reconcile(pod: V1Pod): Promise<void> {
    if (this.terminating) return;
    this.ctx ??= this.driver.context(this.d.context(pod, this.abort.signal));
    // The first volume set-up runs while the pod's IPs are set up, when no volume shows them.
    const early = this.ips === undefined && !volumesShowPodIPs(pod) ? this.volumes.sync(pod) : undefined;
    // A new pod's image pulls run meanwhile too (image-prefetch.ts); its first start awaits them.
    const prefetched = this.ips === undefined ? this.driver.prefetch?.(pod) : undefined;
    this.ips ??= await this.setUpNetwork(pod);
    if (!this.ips || this.terminating) {
      await early;
      return;
    }
    pod = withPodIPs(pod, this.ips);
    // Containers kept across a nodelet restart run already: adopt them before the volume re-sync.
    await this.driver.adopt?.(pod);
    if (this.terminating) return;
    const skipVolumes = this.statusOnly && this.volumes.isReady;
    this.statusOnly = false;
    if (early ? !(await early) : !skipVolumes && !(await this.volumes.sync(pod))) return;
    if (this.terminating) return;
    await this.driver.sync(pod, prefetched);
  }

  /** The pod's IPs, or undefined (a `FailedCreatePodSandBox` event, retried after a back-off) when the network cannot give one yet. */
  private async setUpNetwork(pod: V1Pod): Promise<string[] | undefined> {
    if (pod.spec?.hostNetwork === true) return [this.d.hostIP];
    if (!this.d.network) return [];
    try {
      return await this.d.network.setUp(pod);
    } catch (e) {
      this.d.event('Warning', 'FailedCreatePodSandBox', `Failed to create pod sandbox: ${e instanceof Error ? e.message : String(e)}`);
      this.d.requeue(this.d.backoff.volume.next(`${pod.metadata!.uid}/sandbox`));
      return undefined;
    }
  }

  /** The provider reported a change: sync the pod again, without re-syncing its volumes. */
  statusChanged(): void {
    if (this.abort.signal.aborted) return;
    this.statusOnly = true;
    this.d.requeue(0);
  }

  /** The pod status to post. */
  status(pod: V1Pod): V1PodStatus {
    const ips = this.ips ?? [];
    const status = this.driver.status(withPodIPs(pod, ips));
    return ips.length ? { ...status, podIP: ips[0], podIPs: ips.map((ip) => ({ ip })) } : status;
  }

  /** True when the pod finished for good. */
  finished(pod: V1Pod): boolean {
    return this.driver.finished(pod);
  }

  /**
   * The pod is being deleted (or stopped for good): nothing new starts, and the driver aborts
   * what is in flight (image pulls, container starts: the pod context's signal) at once, without
   * waiting for the sync running them; `terminate` follows. Upstream cancels the running sync of
   * a pod the same way when its termination is requested.
   */
  cancel(): void {
    this.terminating = true;
    this.driver.cancel();
  }

  /** Stops the pod within `graceMs`, aborts its signal and frees its back-off entries; never rejects. */
  async terminate(pod: V1Pod, graceMs: number): Promise<void> {
    this.terminating = true;
    await this.driver.stop(pod, graceMs);
    this.abort.abort();
    const prefix = `${pod.metadata!.uid}/`;
    for (const b of [this.d.backoff.restart, this.d.backoff.pull, this.d.backoff.volume]) b.resetPrefix(prefix);
  }

  /** Container `name` as the kubelet API sees it, once it has started at least once; else undefined. */
  container(name: string): RunnerContainer | undefined {
    return this.driver.container(name);
  }
}

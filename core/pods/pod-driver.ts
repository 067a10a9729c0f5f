/**
 * The pod-level boundary between the one {@link PodWorker} and a provider
 * kind (virtual-kubelet's `syncProviderWrapper`): the worker owns what every
 * pod shares (context, abort and cancel, volumes, termination, back-off
 * clean-up, status-only wakes) and asks a driver for the provider-specific
 * steps. Two drivers: `ContainerDriver` (core runs the containers of a
 * container `Provider`) and `PodProviderDriver` (a `PodProvider` owns the
 * pod). Core-internal on purpose: the container driver keeps container detail
 * (CrashLoopBackOff message, containerID, resume after restart) that the
 * public `PodProvider` contract does not carry.
 */
import type { V1Pod, V1PodStatus } from '@kubernetes/client-node';
import type { AnyProvider, PodContext } from '@nodelet/plugin-api/v1';
import type { Backoff } from '../backoff/index.ts';
import type { PodSetup } from './pod-setup.ts';
import type { PodVolumes } from './pod-volumes.ts';
import type { RunnerContainer } from './container-view.ts';
import type { ProbeManager } from '../probes/index.ts';
import type { PrefetchedPulls } from './image-prefetch.ts';
import type { ResizeActuation } from './pod-allocation.ts';

/**
 * The back-offs of a pod's work, shared by all workers; every key starts with
 * the pod's uid and a `/`, so the worker frees a pod's entries on terminate.
 * - `restart`: container restarts and failed starts; a `PodProvider`'s failed `createPod`/`updatePod`.
 * - `pull`: image pulls of a container provider.
 * - `volume`: volume set-up retries (upstream: 500 ms doubling to 2m2s).
 */
export interface PodBackoffs {
  restart: Backoff;
  pull: Backoff;
  volume: Backoff;
}

/** What the worker hands its driver: the shared services and the pod's shared state. */
export interface DriverEnv {
  setup: PodSetup;
  hostIP: string;
  backoff: PodBackoffs;
  /** The pod's volumes (set up by the worker before every `sync`). */
  volumes: PodVolumes;
  /** When the pod started on this node (from its status after a restart of nodelet). */
  startTime: Date;
  /** Re-queues the pod's key after `ms`. */
  requeue(ms: number): void;
  /** Records an event on the pod; `fieldPath` like `spec.containers{name}`. */
  event(type: 'Normal' | 'Warning', reason: string, note: string, fieldPath?: string): void;
  /** The pod's context (made on the first sync, before the driver runs). */
  ctx(): PodContext;
  /** True once the pod is being deleted: start nothing new. */
  terminating(): boolean;
  /** Aborts the pod context's signal (a `PodProvider`'s grace period is over). */
  abort(): void;
  /** Asks for a status-only sync (a `PodProvider`'s `statusChanged()`). */
  statusChanged(): void;
  /** The node's prober (probes and lifecycle hooks of container runs); without it they are not run (unit tests). */
  probes?: ProbeManager;
  /** In-place pod resize (container-resize.ts); without it running containers keep the resources they started with. */
  resize?: ResizeActuation;
}

/** The provider-specific steps of one pod's path. */
export interface PodDriver {
  /** The provider running the pod. */
  readonly provider: AnyProvider;
  /** The pod context the provider sees: `base` plus what this kind adds. */
  context(base: PodContext): PodContext;
  /**
   * Optional: starts, while the worker sets up a new pod's network and volumes,
   * the work of the next `sync` that needs neither (the container driver's
   * image pulls, image-prefetch.ts). The worker hands the result to that
   * `sync`, or drops it when the volumes are not ready. Never throws.
   */
  prefetch?(pod: V1Pod): PrefetchedPulls | undefined;
  /** Converges the pod towards `pod` (volumes are ready); returns quickly. `prefetched`: what this reconcile's `prefetch` started. */
  sync(pod: V1Pod, prefetched?: PrefetchedPulls): Promise<void>;
  /**
   * Optional: re-adopts the runs a provider kept across a nodelet restart,
   * before the volume re-sync (their volumes are already mounted); `sync`
   * adopts what is left. Never rejects.
   */
  adopt?(pod: V1Pod): Promise<void>;
  /** The pod status to post. */
  status(pod: V1Pod): V1PodStatus;
  /** True once the pod reached Succeeded or Failed for good. */
  finished(pod: V1Pod): boolean;
  /** The pod is being deleted: abort what is in flight now (see `PodWorker.cancel`). */
  cancel(): void;
  /** Stops the pod within `graceMs`; never rejects. */
  stop(pod: V1Pod, graceMs: number): Promise<void>;
  /** Container `name` if it has started at least once. */
  container(name: string): RunnerContainer | undefined;
}

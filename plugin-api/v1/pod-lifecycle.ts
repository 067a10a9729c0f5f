/**
 * The whole-pod capability (virtual-kubelet's PodLifecycleHandler shape): a
 * provider that implements `pods` receives each pod as a unit and reports its
 * status; core then does not start containers itself. Core still admits the
 * pod, prepares its volumes, resolves env/argv/mounts on request, and posts
 * the status the provider reports.
 */
import type { PodRef } from './capabilities.ts';
import type { Mount, ContainerLimits, ContainerExit } from './containers.ts';
import type { PodContext } from './provider.ts';

/** A pod phase, as in core/v1 PodStatus.phase. */
export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

/** One container of a pod spec, as much of it as providers usually read. */
export interface PodContainerSpec {
  /** The container's name, unique in the pod. */
  readonly name: string;
  /** The image reference as written in the spec. */
  readonly image?: string;
  /** The entrypoint (`command`), unexpanded (`$(VAR)` as written); {@link PodLifecycleContext.resolveContainer} expands it. */
  readonly command?: readonly string[];
  /** The arguments (`args`), unexpanded. */
  readonly args?: readonly string[];
  /** The working directory, if set. */
  readonly workingDir?: string;
}

/**
 * The core/v1 Pod as core holds it (the object `@kubernetes/client-node` decodes:
 * timestamps are `Date`s), typed for the fields providers commonly read; every
 * other field of the Kubernetes API reference is there too, under its API name.
 */
export interface KubePod {
  /** `v1`. */
  readonly apiVersion?: string;
  /** `Pod`. */
  readonly kind?: string;
  /** The object's metadata (ObjectMeta). */
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly uid?: string;
    readonly generation?: number;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly creationTimestamp?: Date;
    readonly deletionTimestamp?: Date;
  };
  /** The pod's spec (PodSpec). */
  readonly spec?: {
    readonly nodeName?: string;
    readonly runtimeClassName?: string;
    readonly restartPolicy?: string;
    readonly terminationGracePeriodSeconds?: number;
    readonly activeDeadlineSeconds?: number;
    readonly containers: readonly PodContainerSpec[];
    readonly initContainers?: readonly PodContainerSpec[];
    readonly volumes?: ReadonlyArray<{ readonly name: string }>;
  };
  /** The pod's status as last posted (PodStatus). */
  readonly status?: {
    readonly phase?: string;
    readonly podIP?: string;
    readonly podIPs?: ReadonlyArray<{ readonly ip: string }>;
    readonly qosClass?: string;
  };
}

/** The pod object core hands over (a subset of core/v1 Pod; `raw` holds the full object). */
export interface PodObject {
  /** The pod's identity, labels and annotations. */
  readonly metadata: PodRef & {
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  /** The parts of the spec a provider usually reads. */
  readonly spec: {
    readonly containers: readonly PodContainerSpec[];
    readonly initContainers?: readonly PodContainerSpec[];
    readonly restartPolicy?: 'Always' | 'OnFailure' | 'Never';
    readonly runtimeClassName?: string;
  };
  /** The full core/v1 Pod as received from the API server. */
  readonly raw: KubePod;
}

/** A container's state, as in core/v1 ContainerState (exactly one member set). */
export type ContainerStateReport =
  | { readonly waiting: { readonly reason: string; readonly message?: string } }
  | { readonly running: { readonly startedAt: Date } }
  | { readonly terminated: ContainerExit & { readonly startedAt?: Date } };

/** One container's status, as the provider sees it. */
export interface ContainerStatusReport {
  /** The container's name in the pod spec. */
  readonly name: string;
  /** What the container is doing. */
  readonly state: ContainerStateReport;
  /** The container is ready to serve while it runs (core derives the pod's `Ready` condition from it). */
  readonly ready: boolean;
  /** How many times the container was restarted. */
  readonly restartCount: number;
  /** `<provider>://<id>`, once the container has run. */
  readonly containerID?: string;
  /** The image the container runs, `<repository>@sha256:<digest>`. */
  readonly imageID?: string;
}

/** The status of a pod, as a provider reports it. Core fills in IPs, conditions and times. */
export interface PodStatusReport {
  /** The pod's phase. */
  readonly phase: PodPhase;
  /** A CamelCase reason, e.g. `CrashLoopBackOff`. */
  readonly reason?: string;
  /** A human-readable explanation of the phase or reason. */
  readonly message?: string;
  /** The init containers' statuses (`status.initContainerStatuses`). */
  readonly initContainers?: readonly ContainerStatusReport[];
  /** The containers' statuses (`status.containerStatuses`). */
  readonly containers?: readonly ContainerStatusReport[];
}

/** A container of the pod with everything core resolves (env, argv, volumes). */
export interface ResolvedContainer {
  /** The container's name in the pod spec. */
  readonly name: string;
  /** The image reference as written in the spec. */
  readonly image: string;
  /** `command` + `args` with `$(VAR)` expanded. */
  readonly argv: readonly string[];
  /** The resolved environment (`env`, `envFrom`, `valueFrom`). */
  readonly env: Readonly<Record<string, string>>;
  /** The container's volumes, prepared by core, in spec order. */
  readonly mounts: readonly Mount[];
  /** The container's resource limits. */
  readonly limits: ContainerLimits;
  /** The working directory, if set. */
  readonly workingDir?: string;
}

/** What core hands a whole-pod provider for one pod, on top of {@link PodContext}. */
export interface PodLifecycleContext extends PodContext {
  /** Resolves a container's env, argv and mounts (volumes are already prepared). */
  resolveContainer(name: string): Promise<ResolvedContainer>;
  /** The CRI log file of a container's run (its directory exists); `kubectl logs` reads it. */
  logPath(container: string, restartCount: number): string;
  /** Tells core the pod's status changed, so it calls `getPodStatus` and posts it. */
  statusChanged(): void;
}

/**
 * The pod lifecycle of a provider that owns whole pods. Calls for one pod are
 * serialised by core; calls for different pods may run concurrently.
 */
export interface PodLifecycle {
  /** Starts running a new pod; resolves once it is under way (not when it ends). */
  createPod(pod: PodObject, ctx: PodLifecycleContext): Promise<void>;
  /** The pod's spec changed in a mutable field (labels, annotations, activeDeadlineSeconds). */
  updatePod?(pod: PodObject, ctx: PodLifecycleContext): Promise<void>;
  /** Stops the pod within `gracePeriodMs` and frees its resources; resolves when it is gone. */
  deletePod(pod: PodObject, ctx: PodLifecycleContext, gracePeriodMs: number): Promise<void>;
  /**
   * The pod's current status, or undefined if the provider does not know the pod. May answer
   * with a promise (a provider that asks a remote agent): core then posts the last status it
   * got meanwhile, keeps one call in flight (given up on, and made again, after 30 s without an
   * answer), and syncs the pod again once an answer changes it.
   */
  getPodStatus(pod: PodRef): PodStatusReport | undefined | Promise<PodStatusReport | undefined>;
  /**
   * Optional: the pods the provider still runs, as `createPod` received them — for a provider
   * whose pods outlive nodelet's process. Core calls it once at start and deletes (`deletePod`,
   * grace 0) every pod no longer bound to this node, as virtual-kubelet deletes dangling pods.
   */
  getPods?(): Promise<readonly PodObject[]>;
}

import type { PulledImage } from './images.ts';

/** A directory presented to the container (a resolved pod volume). */
export interface Mount {
  /** The volume's name in the pod spec. */
  readonly name: string;
  /**
   * Where the data lives on the host (already prepared by core, inside its root): a real
   * path when the container starts. The container may rename parts of its volumes
   * afterwards (a subPath directory swapped for a symlink): check at every access that it
   * still is a real path of the same directory before following it.
   */
  readonly hostPath: string;
  /** The container's `mountPath` (absolute). */
  readonly containerPath: string;
  /** The mount is read-only (`readOnly` of the volume mount, or a volume that is always read-only). */
  readonly readOnly: boolean;
}

/** Resource limits of the container, in plain numbers. */
export interface ContainerLimits {
  /** `resources.limits.memory` in bytes, if set. */
  readonly memoryBytes?: number;
  /** `resources.limits.cpu` in millicores, if set. */
  readonly cpuMillis?: number;
}

/** A port the container declares in `ports[]`. */
export interface ContainerPort {
  /** The port's `name`, if set (probes and Services may refer to it). */
  readonly name?: string;
  /** The port number the container listens on. */
  readonly containerPort: number;
  /** `TCP` (the default), `UDP` or `SCTP`. */
  readonly protocol: 'TCP' | 'UDP' | 'SCTP';
}

/** The pod's network as its containers see it. */
export interface PodNetwork {
  /**
   * The pod's addresses (`status.podIPs`, primary first), held by core on the node's
   * pod interface. For a `hostNetwork` pod, the node's own addresses. Empty when
   * the node has no pod network (no pod CIDR): listen on loopback then.
   */
  readonly podIPs: readonly string[];
  /** `spec.hostNetwork`. */
  readonly hostNetwork: boolean;
}

/** Everything a provider needs to start one container, resolved by core. */
export interface ContainerSpec {
  /** A unique id for this container instance (the part after `<scheme>://` in containerID). */
  readonly id: string;
  /**
   * Pod identity, and the pod's `metadata.annotations` (core always sets them; optional so
   * specs built by hand in tests stay short).
   */
  readonly pod: {
    readonly namespace: string;
    readonly name: string;
    readonly uid: string;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  /** The container's name in the pod spec. */
  readonly name: string;
  /** The image, already pulled. */
  readonly image: PulledImage;
  /** argv: `command` + `args` resolved with `$(VAR)` expansion (argv[0] is the program name). */
  readonly argv: readonly string[];
  /** The resolved environment (`env`, `envFrom`, `valueFrom`, device-plugin envs). */
  readonly env: Readonly<Record<string, string>>;
  /** Resolved volumes, in spec order. */
  readonly mounts: readonly Mount[];
  /** The container's resource limits. */
  readonly limits: ContainerLimits;
  /** The working directory (`workingDir`), if set. */
  readonly workingDir?: string;
  /**
   * The container's log file (CRI format, see `cri-log.ts`). The provider writes
   * stdout/stderr there; core reads it for `kubectl logs`.
   */
  readonly logPath: string;
  /** Which restart of the container this is (0 for the first run). */
  readonly restartCount: number;
  /** The container's declared ports, in spec order (empty when none). */
  readonly ports?: readonly ContainerPort[];
  /** The pod's network. Core always sets it; optional so specs built by hand in tests stay short. */
  readonly network?: PodNetwork;
  /**
   * `stdin` of the container spec: keep a stdin open for the container that
   * `kubectl attach -i` writes to (through the provider's optional `attach`);
   * without it the container's stdin reads end of input at once.
   */
  readonly stdin?: boolean;
  /**
   * The pod's QoS class (`status.qosClass`, or computed from every container's requests and
   * limits as upstream does). `limits` alone cannot tell a Burstable pod with only requests
   * from a BestEffort one. Core always sets it; optional so specs built by hand stay short
   * (a provider should treat an absent class as not BestEffort).
   */
  readonly qosClass?: 'Guaranteed' | 'Burstable' | 'BestEffort';
}

/** Why a container ended, as in `containerStatuses[].state.terminated`. */
export interface ContainerExit {
  /** The exit code (0: success; 128 + the signal's number when a signal ended it, e.g. 137 for SIGKILL, as a Linux container reports it). */
  readonly exitCode: number;
  /** `Completed` (exit 0), `Error`, `OOMKilled`, or a provider-specific CamelCase reason. */
  readonly reason: string;
  /** A human message, e.g. the trap message of a crashed module. */
  readonly message?: string;
  /** When the container ended. */
  readonly finishedAt: Date;
}

/** A started container. */
export interface RunningContainer {
  /** Same as `ContainerSpec.id`. */
  readonly id: string;
  /** When the container started running. */
  readonly startedAt: Date;
  /** Resolves (never rejects) when the container ends for any reason. */
  readonly exit: Promise<ContainerExit>;
  /**
   * Stops the container: politely first if the runtime can, forcibly once
   * `gracePeriodMs` has passed. Resolves when it has ended (`exit` is settled).
   */
  stop(gracePeriodMs: number): Promise<void>;
}

/**
 * A container a provider still knows after nodelet restarted (see
 * `Provider.listContainers`): one that runs, or one that ended while nodelet
 * was away and whose exit was not collected yet.
 */
export interface AdoptableContainer {
  /** Same as `ContainerSpec.id` of the run that started it. */
  readonly id: string;
  /** The pod it belongs to. */
  readonly pod: { readonly namespace: string; readonly name: string; readonly uid: string };
  /** The container's name in the pod spec. */
  readonly name: string;
  /** When the run started (the `startedAt` of its `RunningContainer`). */
  readonly startedAt: Date;
  /** Set when it has ended (its exit, kept until adopted or released). */
  readonly exit?: ContainerExit;
  /**
   * Optional: the `ContainerSpec.restartCount` of the run that started it. Core uses it for
   * static pods, whose restart count is not read back from the API (0 when absent).
   */
  readonly restartCount?: number;
}

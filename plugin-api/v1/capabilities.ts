/**
 * Optional provider capabilities. Core discovers them by presence
 * (`provider.stats !== undefined`), never by the provider's name; a provider
 * that lacks one is answered with "not supported" by the kubelet API.
 */

import type { ContainerLimits } from './containers.ts';

/** Identity of a pod, as core hands it to a provider. */
export interface PodRef {
  /** The pod's namespace (`metadata.namespace`). */
  readonly namespace: string;
  /** The pod's name (`metadata.name`). */
  readonly name: string;
  /** The pod's UID (`metadata.uid`): tells apart two pods that had the same name one after the other. */
  readonly uid: string;
}

/** A terminal size, as sent by `kubectl exec -t`/`attach -t`. */
export interface TerminalSize {
  /** Columns. */
  readonly width: number;
  /** Rows. */
  readonly height: number;
}

/** The streams of an attach session (the kubelet API's streaming side). */
export interface StreamIO {
  /** Input, when the client asked for stdin; ends when the client closes it. */
  readonly stdin?: AsyncIterable<Uint8Array>;
  /** Sends output to the client's stdout (with `tty`, stderr is merged here). */
  stdout(chunk: Uint8Array): void;
  /** Sends output to the client's stderr. */
  stderr(chunk: Uint8Array): void;
  /** True when the client asked for a terminal. */
  readonly tty: boolean;
  /** Terminal resizes, when `tty` is set. */
  readonly resize?: AsyncIterable<TerminalSize>;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
}

/** A bidirectional byte stream (one port-forward connection). */
export interface ByteStream {
  /** Bytes from the client. */
  readonly readable: AsyncIterable<Uint8Array>;
  /** Sends bytes to the client. */
  write(chunk: Uint8Array): void | Promise<void>;
  /** Ends the stream towards the client. */
  close(): void;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
}

/** Usage of one container, as in the kubelet summary API (`/stats/summary`). */
export interface ContainerStats {
  /** When the numbers were taken. */
  readonly timestamp: Date;
  /** CPU usage; left out when the provider cannot measure it. */
  readonly cpu?: {
    /** CPU time used since the container started, in core-nanoseconds. */
    readonly usageCoreNanoSeconds: number;
    /** Recent usage in nano-cores (1e9 = one core), if the provider samples it. */
    readonly usageNanoCores?: number;
  };
  /** Memory usage; left out when the provider cannot measure it. */
  readonly memory?: {
    /** The working set in bytes (what eviction and `kubectl top` use). */
    readonly workingSetBytes: number;
    /** Total memory in use, in bytes. */
    readonly usageBytes?: number;
  };
}

/**
 * The optional capabilities a provider may implement. Each one is discovered
 * by presence; see {@link capabilitiesOf}.
 */
export interface OptionalCapabilities {
  /**
   * Attaches to a running container's streams (kubectl attach). Resolves when
   * the session ends (`io.signal` aborted, or the container ended). Core
   * already sends the client the container's output from its log, so a
   * provider whose output goes to `ContainerSpec.logPath` only feeds
   * `io.stdin` to the container (given when the client asked for stdin and the
   * spec has `stdin: true`); `io.stdout`/`io.stderr` are for output that
   * bypasses the log. Throw a branded `NotFound` for an unknown id.
   */
  attach?(containerId: string, io: StreamIO): Promise<void>;
  /** Forwards one connection to `port` of the pod (kubectl port-forward). Resolves when it ends. */
  portForward?(pod: PodRef, port: number, stream: ByteStream): Promise<void>;
  /** Current usage of a container. Throw a branded `NotFound` for an unknown id. */
  stats?(containerId: string): Promise<ContainerStats>;
  /** The provider's threads shared by several containers, with their load (`/metrics`). */
  threads?(): readonly ThreadLoad[];
  /** The requests its containers served themselves (e.g. HTTP components), per container (`/metrics`). */
  requestMetrics?(): readonly ContainerRequestMetrics[];
  /**
   * Changes the limits of running container `containerId` in place, without restarting it
   * (in-place pod resize, for a container whose `resizePolicy` for the resource is
   * `NotRequired`, the default). `limits` are the container's limits in full, as at its start
   * (a limit left out means none). Raising the memory limit takes effect at once (the
   * container may use more memory as soon as this resolves); lowering it takes effect only
   * when the container uses less memory than the new limit now — otherwise change nothing and
   * resolve `{ applied: false, memoryUsageBytes }`: core then reports the resize as upstream's
   * kubelet reports a limit below current usage (`PodResizeInProgress`, reason `Error`) and
   * asks again at the pod's next sync. A CPU limit: apply what the runtime can enforce (core
   * records and reports the value either way).
   *
   * Core calls it only for a running container, one call at a time per container, and
   * resolves the resize only once this resolves (until then the pod shows
   * `PodResizeInProgress`). Throw a branded `NotFound` for an unknown or ended container, and
   * `NotSupported` when this container cannot be resized in place (core reports the message
   * as the resize's error). Without this capability, core reports a `NotRequired` resize as
   * `Infeasible` and restarts containers whose policy is `RestartContainer`.
   */
  resizeContainer?(containerId: string, limits: ContainerLimits): Promise<ContainerResizeOutcome>;
}

/** What {@link OptionalCapabilities.resizeContainer} did. */
export interface ContainerResizeOutcome {
  /**
   * True when the new limits are in force. False when the memory limit was lowered to or
   * below what the container uses now: nothing was changed.
   */
  readonly applied: boolean;
  /** The container's memory in use, in bytes, when the provider checked (set when `applied` is false). */
  readonly memoryUsageBytes?: number;
}

/**
 * The requests one container served, as `/metrics` reports them (labels `namespace`, `pod`,
 * `container`, as cAdvisor labels container metrics). Counts since the container started.
 */
export interface ContainerRequestMetrics {
  /** The container's pod. */
  readonly pod: PodRef;
  /** The container's name. */
  readonly container: string;
  /** Requests answered, by HTTP status code: `[code, count]`. */
  readonly requestsByCode: ReadonlyArray<readonly [number, number]>;
  /** How long requests took: cumulative counts by upper bound in seconds (`[le, count]`, the last `Infinity`), their sum and count. */
  readonly duration: {
    /** Cumulative `[upper bound in seconds, requests]`, ascending; the last bound is `Infinity`. */
    readonly buckets: ReadonlyArray<readonly [number, number]>;
    /** Seconds, all requests together. */
    readonly sum: number;
    /** Requests measured. */
    readonly count: number;
  };
  /** Requests being served now. */
  readonly inFlight: number;
  /** Instances of the workload alive to serve requests (busy and ready). */
  readonly instances: number;
  /** Requests that ended in a trap (the workload failed; answered 500). */
  readonly traps: number;
  /** Requests ended by their timeout. */
  readonly timeouts: number;
  /** Requests refused because every instance was busy (503). */
  readonly overloaded: number;
}

/** One thread of a provider that runs several containers, as `/metrics` reports it. */
export interface ThreadLoad {
  /** The thread's id, unique within the provider (e.g. a worker's `threadId`). */
  readonly threadId: number;
  /** Containers running on it. */
  readonly containers: number;
  /** How late its event loop runs, in seconds (max since the last call, or how late it is now). */
  readonly eventLoopDelaySeconds: number;
}

/** Which optional capabilities an object implements, by presence. */
export interface CapabilitySet {
  /** The provider runs commands in containers (`exec`: exec probes, lifecycle hooks). */
  readonly exec: boolean;
  /** The provider attaches to containers' streams (`attach`: `kubectl attach -i`). */
  readonly attach: boolean;
  /** The provider forwards ports itself (`portForward`). */
  readonly portForward: boolean;
  /** The provider reports container usage (`stats`: `/stats/summary`, `kubectl top`). */
  readonly stats: boolean;
  /** The provider changes a running container's limits in place (`resizeContainer`: in-place pod resize). */
  readonly resizeContainer: boolean;
  /** The provider owns whole pods (`pods`), see `PodProvider`. */
  readonly pods: boolean;
}

/** Reports the optional capabilities of a provider (any object with the optional members). */
export function capabilitiesOf(p: object): CapabilitySet {
  const has = (k: string) => typeof (p as Record<string, unknown>)[k] === 'function';
  const pods = (p as { pods?: unknown }).pods;
  return {
    exec: has('exec'),
    attach: has('attach'),
    portForward: has('portForward'),
    stats: has('stats'),
    resizeContainer: has('resizeContainer'),
    pods: typeof pods === 'object' && pods !== null,
  };
}

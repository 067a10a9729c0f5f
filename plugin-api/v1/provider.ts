import type { Logger } from './logger.ts';
import type { ImageService, PulledImage, ImagePullOptions } from './images.ts';
import type { AdoptableContainer, ContainerSpec, RunningContainer } from './containers.ts';
import type { NodeContribution } from './node.ts';
import type { OptionalCapabilities } from './capabilities.ts';
import type { PodLifecycle } from './pod-lifecycle.ts';
import type { ServiceResolver } from './services.ts';

/** The API version string a v1 provider declares. */
export const API_VERSION = 'nodelet.dev/v1' as const;

/** Event types, as in core/v1 Event.type. */
export type EventType = 'Normal' | 'Warning';

/** Records a Kubernetes Event on the pod the context belongs to. */
export interface EventRecorder {
  /** Emit an event, e.g. `event('Normal', 'Pulled', 'Successfully pulled image "x"')`. */
  (type: EventType, reason: string, message: string): void;
}

/**
 * What core hands a provider once, at initialisation. `Config` is the type of
 * the provider's configuration (what its {@link ProviderBase.validateConfig}
 * returns); a provider declares `init(ctx: ProviderContext<MyConfig>)`.
 */
export interface ProviderContext<Config = unknown> {
  /** A logger scoped to the provider. */
  readonly log: Logger;
  /** A directory owned by the provider (under `--root-dir/providers-data/<name>`), already created. */
  readonly rootDir: string;
  /** The OCI distribution client of core: pulls, verifies and caches images by digest. */
  readonly images: ImageService;
  /** Aborted when nodelet shuts down. */
  readonly signal: AbortSignal;
  /**
   * The provider's configuration: the file `--provider-config <name>=<path>` names for it
   * (YAML or JSON), as {@link ProviderBase.validateConfig} returned it (the parsed document
   * when the provider has none); undefined when no file is named.
   */
  readonly config?: Config;
  /**
   * Kubernetes Services for the connections the provider's workloads make through its own code
   * (nodelet runs no kube-proxy): where a connection to a ClusterIP or a Service name goes.
   * Present when nodelet runs with an API server; absent in standalone mode (and from a core
   * older than this member).
   */
  readonly services?: ServiceResolver;
}

/** What core hands a provider for one pod. */
export interface PodContext {
  /** A logger whose lines carry the pod's `namespace/name`. */
  readonly log: Logger;
  /** Records events on the pod (`kubectl describe pod` shows them). */
  readonly event: EventRecorder;
  /** Aborted when the pod is deleted or nodelet shuts down. */
  readonly signal: AbortSignal;
  /** The pod's own directory (`--root-dir/pods/<uid>`). */
  readonly podDir: string;
  /**
   * The pod's QoS class, as {@link ContainerSpec.qosClass} gives it to each container: a provider
   * can prepare at {@link Provider.pullImage} what the pod's containers will run on. Absent
   * from a core older than this member and where core has no pod (a standalone `nodelet run`).
   */
  readonly qosClass?: ContainerSpec['qosClass'];
}

/** How core runs a command through {@link ProviderBase.exec}. */
export interface ExecOptions {
  /** The command must finish within this many milliseconds (a probe's `timeoutSeconds`). */
  readonly timeoutMs: number;
  /** Aborted when core no longer waits (timeout, container stopped). */
  readonly signal: AbortSignal;
}

/** The outcome of {@link ProviderBase.exec}. */
export interface ExecResult {
  /** The command's exit status (0: success). */
  readonly exitCode: number;
  /** What the command wrote (stdout and stderr). */
  readonly output: string;
}

/**
 * What every provider has, whatever it runs: identity, node contributions,
 * initialisation/shutdown and the optional capabilities. Providers implement
 * {@link Provider} (container runtime) or {@link PodProvider} (whole pods).
 */
export interface ProviderBase extends OptionalCapabilities {
  /** A unique, DNS-label name such as `wasi`. */
  readonly name: string;
  /** Always {@link API_VERSION} for this interface. */
  readonly apiVersion: typeof API_VERSION;
  /**
   * The RuntimeClass handlers this provider serves (e.g. `['wasi', 'wasmtime']`). Optional: a provider
   * package declares them once, in its `package.json` (`nodelet.handlers`, read before its code is
   * loaded), and core serves those; when given here too, they must be the same (else the package is
   * skipped with `NDL_PROVIDER_SHAPE`).
   */
  readonly handlers?: readonly string[];
  /** The `kubernetes.io/arch` this provider's pods run on, e.g. `wasm32-wasi`. */
  readonly architecture: string;
  /** The `kubernetes.io/os` this provider's pods run on, e.g. `wasi`. */
  readonly os: string;
  /** The runtime name and version reported as `nodeInfo.containerRuntimeVersion`, e.g. `nodelet-wasi://0.1.0`. */
  readonly runtimeVersion: string;

  /**
   * Optional: checks the parsed configuration file (`--provider-config <name>=<path>`) and returns
   * the configuration `init` receives as `ctx.config` (or a promise of it). A throw (or a rejection)
   * skips the provider with `NDL_PROVIDER_CONFIG` and the message, naming the file.
   */
  validateConfig?(raw: unknown): unknown;
  /** Called once before any pod is handed over; a rejection (or a timeout) skips the provider. */
  init?(ctx: ProviderContext): Promise<void>;
  /** What the provider adds to the Node object (labels, taints, capacity, conditions). */
  node?(): NodeContribution;
  /** Stops everything and frees resources when nodelet exits. */
  shutdown?(): Promise<void>;

  /**
   * Optional: runs `command` in a running container and waits for it (exec
   * probes and exec lifecycle hooks; later kubectl exec). Resolves with the
   * exit code and the combined output (core keeps the first 10 KiB); rejects
   * when the command could not run. `opts` (deadline and signal) was added
   * after the first `Promise<never>` stub: an implementation without it
   * still type-checks.
   */
  exec?(containerId: string, command: string[], opts?: ExecOptions): Promise<ExecResult>;
}

/**
 * A v1 container-runtime provider: it pulls images and runs containers; core
 * does the rest of the pod lifecycle (admission, volumes, env, restarts and
 * back-off, status, events).
 *
 * Optional capabilities are discovered by presence (`provider.exec !== undefined`).
 */
export interface Provider extends ProviderBase {
  /** Makes an image available locally. Throw a branded `ImagePull`/`InvalidImage` error on failure. */
  pullImage(image: string, opts: ImagePullOptions, ctx: PodContext): Promise<PulledImage>;
  /** Starts one container. Resolves once it runs; its end is reported through `RunningContainer.exit`. */
  startContainer(spec: ContainerSpec, ctx: PodContext): Promise<RunningContainer>;
  /** A container-runtime provider does not own whole pods (the discriminant of {@link AnyProvider}). */
  readonly pods?: undefined;

  /**
   * Optional (out-of-process runtimes): true when the provider's containers
   * outlive nodelet's process. Core then leaves them running when nodelet
   * stops (SIGTERM, a restart or an upgrade) and re-adopts them when it starts
   * again (see {@link Provider.adoptContainer}); a node shutdown (SIGPWR) still
   * stops them.
   */
  readonly keepsContainers?: boolean;
  /**
   * Optional: the containers the provider knows (running, or ended and not yet
   * collected) — what a restarted nodelet may re-adopt. Core calls it once at
   * start and releases (stops and forgets) those that no pod claims.
   */
  listContainers?(): Promise<AdoptableContainer[]>;
  /**
   * Optional: a handle on container `id` started by an earlier nodelet process
   * (same id, same log file; its `exit` resolves at once when it already
   * ended), or `undefined` when the provider does not know it. Events about it
   * (e.g. its runtime was lost) go to `ctx`.
   */
  adoptContainer?(id: string, ctx: PodContext): Promise<RunningContainer | undefined>;
  /** Optional: stops container `id` (if it runs) and forgets it; used for containers no pod claims. */
  releaseContainer?(id: string): Promise<void>;
}

/** Another name for {@link Provider}: the provider that runs containers for core. */
export type ContainerProvider = Provider;

/**
 * A v1 provider that owns whole pods (virtual-kubelet style): core hands each
 * pod to `pods` and posts the status it reports. The pod state machine toolkit
 * (`state-machine.ts`, `pod-states.ts`) helps write one.
 */
export interface PodProvider extends ProviderBase {
  /** The pod lifecycle; its presence is what makes this a pod provider. */
  readonly pods: PodLifecycle;
  /** A pod provider does not pull images for core (it has no {@link Provider.pullImage}). */
  readonly pullImage?: undefined;
  /** A pod provider does not start single containers for core (it has no {@link Provider.startContainer}). */
  readonly startContainer?: undefined;
}

/** Any v1 provider: one that runs containers, or one that owns whole pods (discriminated by `pods`). */
export type AnyProvider = Provider | PodProvider;

/** True when `p` owns whole pods (it has `pods`). */
export function isPodProvider(p: AnyProvider): p is PodProvider {
  return typeof p.pods === 'object' && p.pods !== null;
}

/**
 * What a provider package exports: a factory as the default export (or as
 * `createProvider`), or the provider object itself. Core calls the factory
 * once per process.
 */
export type ProviderFactory = () => AnyProvider | Promise<AnyProvider>;

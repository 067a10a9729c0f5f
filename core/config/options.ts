/**
 * The fully resolved settings nodelet runs with: defaults, then the
 * KubeletConfiguration file (`--config`), then command-line flags.
 */
import os from 'node:os';
import path from 'node:path';
import type { Taint } from './taints.ts';
import type { LogFormat, LogLevel } from './values.ts';
import { REPO_ROOT } from './repo-root.ts';
import { FLAGS } from './flag-table.ts';

export type { LogLevel, Taint };

/** Which routes to other nodes' pod CIDRs nodelet installs (`--pod-routes`): none, or `<CIDR> via <InternalIP>` for nodes on a shared subnet. */
export type PodRoutesMode = 'none' | 'host-gw';

/** How the kubelet API authorizes authenticated callers (upstream `authorization.mode`). */
export type AuthorizationMode = 'Webhook' | 'AlwaysAllow';

/** The directories nodelet keeps under `--root-dir`. */
export interface DerivedDirs {
  /** `<rootDir>/plugins_registry`: where plugins drop registration sockets. */
  readonly pluginsRegistryDir: string;
  /** `<rootDir>/plugins`: plugin sockets and per-plugin state (CSI). */
  readonly pluginsDir: string;
  /** `<rootDir>/device-plugins`: device-plugin Registration socket and checkpoint. */
  readonly devicePluginsDir: string;
  /** `<rootDir>/pod-resources`: the podresources API socket. */
  readonly podResourcesDir: string;
  /** `<rootDir>/pods`: per-pod volumes and state. */
  readonly podsDir: string;
  /** `<rootDir>/logs/pods`: container logs (`<ns>_<name>_<uid>/<container>/<n>.log`). */
  readonly logsDir: string;
}

/** Every setting nodelet runs with, after defaults, config file and flags. */
export interface NodeletOptions extends DerivedDirs {
  kubeconfig?: string;
  /** `--bootstrap-kubeconfig`: credentials (a bootstrap token) to request the client certificate with when `kubeconfig` is missing or expired. */
  bootstrapKubeconfig?: string;
  /** `rotateCertificates`: request a new client certificate at 70-90 % of the current one's lifetime. */
  rotateCertificates: boolean;
  /** `serverTLSBootstrap`: the serving certificate comes from a `kubernetes.io/kubelet-serving` CSR and is rotated. */
  serverTLSBootstrap: boolean;
  hostnameOverride?: string;
  /** hostnameOverride or os.hostname(), trimmed and lower-cased (upstream nodeutil.GetHostname). */
  nodeName: string;
  nodeIP?: string;
  nodeLabels: Record<string, string>;
  registerWithTaints: Taint[];
  maxPods: number;
  /** `--pod-cidr`: pod CIDRs for standalone mode (a node's `spec.podCIDRs` wins in a cluster). */
  podCIDR: string[];
  /** `--pod-interface`: the bridge holding pod IPs. */
  podInterface: string;
  /** `--pod-routes`: routes to other nodes' pod CIDRs (core/network/pod-routes.ts). */
  podRoutes: PodRoutesMode;
  rootDir: string;
  port: number;
  address: string;
  healthzPort: number;
  healthzBindAddress: string;
  certDir: string;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  clientCAFile?: string;
  /** `--cluster-domain`: the cluster's DNS domain (e.g. `cluster.local`); unset or '': Service names are not resolved. */
  clusterDomain?: string;
  /** The KubeletConfiguration file the settings were read from, if any. */
  config?: string;
  providersDir: string[];
  /** Configuration files of providers, by provider name (`--provider-config NAME=PATH`). */
  providerConfig: Record<string, string>;
  defaultProvider: string;
  podManifestPath?: string;
  insecureRegistries: string[];
  logLevel: LogLevel;
  /** `--logging-format`; undefined: text on a terminal, else json. */
  loggingFormat?: LogFormat;
  authorizationMode: AuthorizationMode;
  /** Serve callers without credentials as `system:anonymous` (still authorized). */
  anonymousAuth: boolean;
  /** Accept bearer tokens, checked by TokenReview (needs a kubeconfig). */
  authenticationTokenWebhook: boolean;
  authenticationTokenWebhookCacheTtlMs: number;
  authorizationWebhookCacheAuthorizedTtlMs: number;
  authorizationWebhookCacheUnauthorizedTtlMs: number;
  nodeStatusUpdateFrequencyMs: number;
  nodeStatusReportFrequencyMs: number;
  /** Graceful node shutdown: the whole budget (0 disables it), and the part of it kept for critical pods. */
  shutdownGracePeriodMs: number;
  shutdownGracePeriodCriticalPodsMs: number;
  nodeLeaseDurationSeconds: number;
  syncFrequencyMs: number;
  /** `crashLoopBackOff.maxContainerRestartPeriod`: the cap of the container restart back-off (1 s to 300 s). */
  maxContainerRestartPeriodMs: number;
  /** `--file-check-frequency`: how often the static pod manifests are re-read (besides the file watch). */
  fileCheckFrequencyMs: number;
  /** `--volume-stats-agg-period`: how long a volume's usage is cached (negative: volume stats off). */
  volumeStatsAggPeriodMs: number;
  registerNode: boolean;
  /** Add `kubernetes.io/arch=wasm32-wasi:NoSchedule` to the registration taints. */
  defaultTaint: boolean;
  deviceEndpointGracePeriodMs: number;
  /** Directories of CDI spec files (`--cdi-spec-dirs`). */
  cdiSpecDirs: string[];
  /** How long a deregistered DRA driver's ResourceSlices stay (`--dra-plugin-deregistration-grace-period`). */
  draDeregistrationGracePeriodMs: number;
  /** A registry body without progress for this long fails the pull (`--image-pull-progress-deadline`). */
  imagePullProgressDeadlineMs: number;
  imageGCHighThresholdPercent: number;
  imageGCLowThresholdPercent: number;
  /** Hard eviction thresholds: signal → quantity or percentage (`--eviction-hard`, `evictionHard`). */
  evictionHard: Record<string, string>;
  /** Soft eviction thresholds (`--eviction-soft`); each has a grace period in {@link evictionSoftGracePeriodMs}. */
  evictionSoft: Record<string, string>;
  evictionSoftGracePeriodMs: Record<string, number>;
  /** Least amount reclaimed past a met threshold (`--eviction-minimum-reclaim`). */
  evictionMinimumReclaim: Record<string, string>;
  /** How long a pressure condition stays True after its threshold was last met. */
  evictionPressureTransitionPeriodMs: number;
  /** Longest grace period of a pod evicted for a soft threshold (≤ 0: the pod's own). */
  evictionMaxPodGracePeriodSeconds: number;
  /** How often the eviction manager runs (nodelet's own; upstream fixes it at 10 s). */
  evictionMonitoringPeriodMs: number;
  containerLogMaxSize: string;
  containerLogMaxFiles: number;
}

/** Settings a user can give (flags or config file); everything else is derived. */
export type Settings = Partial<Omit<NodeletOptions, keyof DerivedDirs | 'nodeName'>> & {
  /** Level from klog `--v` / `logging.verbosity`; `logLevel` wins over it. */
  verbosityLevel?: LogLevel;
};

/** Required options without a default value in the flag table: resolveOptions computes them from other settings or starts them empty. */
type Computed =
  | keyof DerivedDirs
  | 'nodeName'
  | 'certDir'
  | 'providersDir'
  | 'providerConfig'
  | 'nodeLabels'
  | 'registerWithTaints'
  | 'podCIDR'
  | 'insecureRegistries'
  | 'evictionSoft'
  | 'evictionSoftGracePeriodMs'
  | 'evictionMinimumReclaim';

/**
 * The settings a run starts from: each flag's `default` from the flag table, read by the
 * flag's own parser. A default in angle brackets (`<root-dir>/pki`) is computed in
 * resolveOptions; `-v`'s default level is `--log-level`'s. That every other required option
 * gets one here is checked by test/unit/config/defaults.test.ts.
 */
function flagDefaults(): Omit<NodeletOptions, Computed> {
  const s: Settings = {};
  for (const f of FLAGS) if (f.default !== '' && !f.default.startsWith('<')) f.apply(s, f.default);
  delete s.verbosityLevel;
  return s as Omit<NodeletOptions, Computed>;
}

const DEFAULTS = flagDefaults();

/** The bundled providers and static pods shipped with nodelet. */
export const BUNDLED_PROVIDERS_DIR = path.join(REPO_ROOT, 'providers');
export const BUNDLED_STATIC_PODS_DIR = path.join(REPO_ROOT, 'examples', 'static-pods');

/** The directories under a root dir. */
function deriveDirs(rootDir: string): DerivedDirs {
  return {
    pluginsRegistryDir: path.join(rootDir, 'plugins_registry'),
    pluginsDir: path.join(rootDir, 'plugins'),
    devicePluginsDir: path.join(rootDir, 'device-plugins'),
    podResourcesDir: path.join(rootDir, 'pod-resources'),
    podsDir: path.join(rootDir, 'pods'),
    logsDir: path.join(rootDir, 'logs', 'pods'),
  };
}

/**
 * Completes merged settings into options: applies defaults and computes the
 * values that depend on others (node name, cert dir, providers, static pods).
 * `hostname` is injectable for tests.
 */
export function resolveOptions(s: Settings, hostname: string = os.hostname()): NodeletOptions {
  const rootDir = path.resolve(s.rootDir ?? DEFAULTS.rootDir);
  const { verbosityLevel, ...given } = s;
  const rest = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined));
  return {
    ...DEFAULTS,
    ...rest,
    nodeLabels: { ...(s.nodeLabels ?? {}) },
    registerWithTaints: [...(s.registerWithTaints ?? [])],
    podCIDR: [...(s.podCIDR ?? [])],
    insecureRegistries: [...(s.insecureRegistries ?? [])],
    cdiSpecDirs: [...(s.cdiSpecDirs ?? DEFAULTS.cdiSpecDirs)],
    evictionHard: { ...(s.evictionHard ?? DEFAULTS.evictionHard) },
    evictionSoft: { ...(s.evictionSoft ?? {}) },
    evictionSoftGracePeriodMs: { ...(s.evictionSoftGracePeriodMs ?? {}) },
    evictionMinimumReclaim: { ...(s.evictionMinimumReclaim ?? {}) },
    logLevel: s.logLevel ?? verbosityLevel ?? DEFAULTS.logLevel,
    nodeName: (s.hostnameOverride || hostname).trim().toLowerCase(),
    rootDir,
    certDir: s.certDir ?? path.join(rootDir, 'pki'),
    providersDir: s.providersDir ?? [path.join(rootDir, 'providers'), BUNDLED_PROVIDERS_DIR],
    providerConfig: { ...(s.providerConfig ?? {}) },
    podManifestPath: s.podManifestPath ?? (s.kubeconfig ? undefined : BUNDLED_STATIC_PODS_DIR),
    ...deriveDirs(rootDir),
  };
}

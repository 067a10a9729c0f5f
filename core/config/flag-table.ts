/**
 * The command-line flags nodelet accepts. Upstream kubelet flags keep their
 * upstream names and meaning; nodelet's own flags are marked `upstream: false`.
 * The one place a setting's flag, default, help and KubeletConfiguration field are
 * written: `--help` (usage.ts), the defaults (options.ts), the `--config` mapping
 * (kubelet-config.ts) and the flag reference of docs/install.md come from here.
 */
import { nodeletError } from '../errors/index.ts';
import { parseTaints } from './taints.ts';
import { parseGoDuration } from './duration.ts';
import { dnsSubdomainError, parseNodeLabels } from './labels.ts';
import { checkThresholdMap, parseGracePeriodMap, parseSignalMap } from './eviction.ts';
import type { AuthorizationMode, PodRoutesMode, Settings } from './options.ts';
import { filePath, scalar, scalarMap, taintList, type FieldApply } from './config-values.ts';
import {
  parseBool,
  parseDuration,
  parseIP,
  parseInterfaceName,
  parsePodCIDRs,
  parseIntIn,
  parseList,
  parseLogFormat,
  parseLogLevel,
  parseMaxContainerRestartPeriod,
  parsePath,
  parsePort,
  parsePositiveDuration,
  parsePositiveInt,
  parseQuantity,
  parseVerbosity,
} from './values.ts';

/** One flag: how it reads, what it sets, and how `--help` shows it. */
export interface FlagSpec {
  /** Name without the leading `--`. */
  readonly name: string;
  /** Value type as pflag prints it in help (`bool` flags take no value). */
  readonly type: 'string' | 'bool' | 'int' | 'duration' | 'ip' | 'mapStringString' | 'strings' | 'level';
  /**
   * The default, as shown in help ('' = none), read by `apply` into the default settings;
   * one in angle brackets (`<root-dir>/pki`) is computed from other settings (options.ts).
   * A `mapStringString` default is shown with its entries sorted, as pflag prints a map.
   */
  readonly default: string;
  readonly help: string;
  /** True for upstream kubelet flags, false for nodelet's own. */
  readonly upstream: boolean;
  /** Parses `raw` into `s`; throws NDL_CONFIG_INVALID_VALUE whose detail is the reason. Called once per occurrence. */
  apply(s: Settings, raw: string): void;
  /** The KubeletConfiguration field (dotted path, e.g. `authentication.webhook.enabled`) that sets the same setting. */
  readonly config?: string;
  /** How the `config` field's value is read where it is not the flag's text (a list, a mapping, a path relative to the file); default: `apply` on the scalar. */
  readonly fromConfig?: FieldApply;
}

const AUTHZ_MODES: readonly AuthorizationMode[] = ['Webhook', 'AlwaysAllow'];

function parseAuthorizationMode(raw: string): AuthorizationMode {
  if (!AUTHZ_MODES.includes(raw as AuthorizationMode)) throw nodeletError('NDL_CONFIG_INVALID_VALUE', `must be one of ${AUTHZ_MODES.join(', ')}`);
  return raw as AuthorizationMode;
}

/** Parses `--cluster-domain`: empty, or a DNS-1123 subdomain (a trailing dot is dropped). */
export function parseClusterDomain(raw: string): string {
  const domain = raw.replace(/\.$/, '').toLowerCase();
  const err = domain === '' ? undefined : dnsSubdomainError(domain);
  if (err) throw nodeletError('NDL_CONFIG_INVALID_VALUE', `not a DNS domain: ${err}`);
  return domain;
}

const POD_ROUTES_MODES: readonly PodRoutesMode[] = ['none', 'host-gw'];

function parsePodRoutes(raw: string): PodRoutesMode {
  if (!POD_ROUTES_MODES.includes(raw as PodRoutesMode)) throw nodeletError('NDL_CONFIG_INVALID_VALUE', `must be one of ${POD_ROUTES_MODES.join(', ')}`);
  return raw as PodRoutesMode;
}

/** Parses a whole-number percentage 0-100. */
export function parsePercent(raw: string): number {
  return parseIntIn(raw, 0, 100);
}

/** Parses container-log-max-files (upstream: must be greater than 1). */
export function parseLogMaxFiles(raw: string): number {
  return parseIntIn(raw, 2, Number.MAX_SAFE_INTEGER);
}

/** The flags, in help order. */
export const FLAGS: readonly FlagSpec[] = [
  // upstream kubelet flags
  {
    name: 'address',
    type: 'ip',
    default: '0.0.0.0',
    upstream: true,
    config: 'address',
    help: 'IP address to serve the kubelet API on',
    apply: (s, r) => {
      s.address = parseIP(r);
    },
  },
  {
    name: 'anonymous-auth',
    type: 'bool',
    default: 'false',
    upstream: true,
    config: 'authentication.anonymous.enabled',
    help: 'Serve requests without credentials as user system:anonymous, group system:unauthenticated (still authorized)',
    apply: (s, r) => {
      s.anonymousAuth = parseBool(r);
    },
  },
  {
    name: 'authentication-token-webhook',
    type: 'bool',
    default: 'true',
    upstream: true,
    config: 'authentication.webhook.enabled',
    help: 'Accept bearer tokens on the kubelet API, checked with a TokenReview (needs --kubeconfig)',
    apply: (s, r) => {
      s.authenticationTokenWebhook = parseBool(r);
    },
  },
  {
    name: 'authentication-token-webhook-cache-ttl',
    type: 'duration',
    default: '2m0s',
    upstream: true,
    config: 'authentication.webhook.cacheTTL',
    help: 'How long TokenReview answers are cached',
    apply: (s, r) => {
      s.authenticationTokenWebhookCacheTtlMs = parseDuration(r);
    },
  },
  {
    name: 'authorization-mode',
    type: 'string',
    default: 'Webhook',
    upstream: true,
    config: 'authorization.mode',
    fromConfig: (s, v) => {
      const m = scalar(v);
      if (m !== 'Webhook' && m !== 'AlwaysAllow') throw nodeletError('NDL_CONFIG_INVALID_VALUE', 'must be Webhook or AlwaysAllow');
      s.authorizationMode = m;
    },
    help: 'Authorization mode for the kubelet API: Webhook (SubjectAccessReview; standalone: AlwaysAllow) or AlwaysAllow',
    apply: (s, r) => {
      s.authorizationMode = parseAuthorizationMode(r);
    },
  },
  {
    name: 'bootstrap-kubeconfig',
    type: 'string',
    default: '',
    upstream: true,
    help: 'kubeconfig (e.g. a bootstrap token) used to request a client certificate when --kubeconfig is missing or expired; --kubeconfig is then written',
    apply: (s, r) => {
      s.bootstrapKubeconfig = parsePath(r);
    },
  },
  {
    name: 'authorization-webhook-cache-authorized-ttl',
    type: 'duration',
    default: '5m0s',
    upstream: true,
    config: 'authorization.webhook.cacheAuthorizedTTL',
    help: 'How long allowed SubjectAccessReview answers are cached',
    apply: (s, r) => {
      s.authorizationWebhookCacheAuthorizedTtlMs = parseDuration(r);
    },
  },
  {
    name: 'authorization-webhook-cache-unauthorized-ttl',
    type: 'duration',
    default: '30s',
    upstream: true,
    config: 'authorization.webhook.cacheUnauthorizedTTL',
    help: 'How long denied SubjectAccessReview answers are cached',
    apply: (s, r) => {
      s.authorizationWebhookCacheUnauthorizedTtlMs = parseDuration(r);
    },
  },
  {
    name: 'cert-dir',
    type: 'string',
    default: '<root-dir>/pki',
    upstream: true,
    help: 'Directory of the certificates: kubelet.crt/.key (self-signed serving) and kubelet-client-*.pem, kubelet-server-*.pem (issued through CSRs)',
    apply: (s, r) => {
      s.certDir = parsePath(r);
    },
  },
  {
    name: 'client-ca-file',
    type: 'string',
    default: '',
    upstream: true,
    config: 'authentication.x509.clientCAFile',
    fromConfig: (s, v, dir) => {
      s.clientCAFile = filePath(v, dir);
    },
    help: 'CA bundle that verifies client certificates on the kubelet API',
    apply: (s, r) => {
      s.clientCAFile = parsePath(r);
    },
  },
  {
    name: 'cluster-domain',
    type: 'string',
    default: '',
    upstream: true,
    config: 'clusterDomain',
    help: "Domain of the cluster (e.g. cluster.local): Wasm pods reach Services by <service>.<namespace>.svc.<domain> and its short forms through nodelet's Service resolver",
    apply: (s, r) => {
      s.clusterDomain = parseClusterDomain(r);
    },
  },
  {
    name: 'config',
    type: 'string',
    default: '',
    upstream: true,
    help: 'KubeletConfiguration file (kubelet.config.k8s.io/v1beta1); flags override it',
    apply: (s, r) => {
      s.config = parsePath(r);
    },
  },
  {
    name: 'container-log-max-files',
    type: 'int',
    default: '5',
    upstream: true,
    config: 'containerLogMaxFiles',
    help: 'Maximum number of log files kept per container (at least 2)',
    apply: (s, r) => {
      s.containerLogMaxFiles = parseLogMaxFiles(r);
    },
  },
  {
    name: 'container-log-max-size',
    type: 'string',
    default: '10Mi',
    upstream: true,
    config: 'containerLogMaxSize',
    help: 'Size at which a container log file is rotated (e.g. 10Mi)',
    apply: (s, r) => {
      s.containerLogMaxSize = parseQuantity(r);
    },
  },
  {
    name: 'healthz-bind-address',
    type: 'ip',
    default: '127.0.0.1',
    upstream: true,
    config: 'healthzBindAddress',
    help: 'IP address for the healthz server',
    apply: (s, r) => {
      s.healthzBindAddress = parseIP(r);
    },
  },
  {
    name: 'eviction-hard',
    type: 'mapStringString',
    // Upstream's DefaultEvictionHard (Linux), in its order: the order thresholds are checked in.
    default: 'memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%,imagefs.available<15%',
    upstream: true,
    config: 'evictionHard',
    fromConfig: (s, v) => {
      s.evictionHard = checkThresholdMap(scalarMap(v));
    },
    help: 'Hard eviction thresholds (e.g. memory.available<1Gi); met, a pod is evicted at once. Replaces the defaults when given',
    apply: (s, r) => {
      s.evictionHard = { ...(s.evictionHard ?? {}), ...checkThresholdMap(parseSignalMap(r, '<')) };
    },
  },
  {
    name: 'eviction-max-pod-grace-period',
    type: 'int',
    default: '0',
    upstream: true,
    config: 'evictionMaxPodGracePeriod',
    fromConfig: (s, v) => {
      s.evictionMaxPodGracePeriodSeconds = Number(scalar(v));
      if (!Number.isSafeInteger(s.evictionMaxPodGracePeriodSeconds)) throw nodeletError('NDL_CONFIG_INVALID_VALUE', 'must be an integer');
    },
    help: "Largest grace period (seconds) given to a pod evicted for a soft threshold; 0 or less: the pod's own",
    apply: (s, r) => {
      s.evictionMaxPodGracePeriodSeconds = parseIntIn(r, -1, Number.MAX_SAFE_INTEGER);
    },
  },
  {
    name: 'eviction-minimum-reclaim',
    type: 'mapStringString',
    default: '',
    upstream: true,
    config: 'evictionMinimumReclaim',
    fromConfig: (s, v) => {
      s.evictionMinimumReclaim = checkThresholdMap(scalarMap(v));
    },
    help: 'Least amount to reclaim past a threshold once it is met (e.g. imagefs.available=2Gi)',
    apply: (s, r) => {
      s.evictionMinimumReclaim = { ...(s.evictionMinimumReclaim ?? {}), ...checkThresholdMap(parseSignalMap(r, '=')) };
    },
  },
  {
    name: 'eviction-monitoring-period',
    type: 'duration',
    default: '10s',
    upstream: false,
    help: 'How often the eviction manager observes its signals and may evict one pod (upstream: fixed 10s)',
    apply: (s, r) => {
      s.evictionMonitoringPeriodMs = parsePositiveDuration(r);
    },
  },
  {
    name: 'eviction-pressure-transition-period',
    type: 'duration',
    default: '5m0s',
    upstream: true,
    config: 'evictionPressureTransitionPeriod',
    help: 'How long a node pressure condition stays True after its threshold was last met',
    apply: (s, r) => {
      s.evictionPressureTransitionPeriodMs = parseDuration(r);
    },
  },
  {
    name: 'eviction-soft',
    type: 'mapStringString',
    default: '',
    upstream: true,
    config: 'evictionSoft',
    fromConfig: (s, v) => {
      s.evictionSoft = checkThresholdMap(scalarMap(v));
    },
    help: 'Soft eviction thresholds (e.g. memory.available<1.5Gi); met for their grace period, a pod is evicted',
    apply: (s, r) => {
      s.evictionSoft = { ...(s.evictionSoft ?? {}), ...checkThresholdMap(parseSignalMap(r, '<')) };
    },
  },
  {
    name: 'eviction-soft-grace-period',
    type: 'mapStringString',
    default: '',
    upstream: true,
    config: 'evictionSoftGracePeriod',
    fromConfig: (s, v) => {
      s.evictionSoftGracePeriodMs = parseGracePeriodMap(scalarMap(v));
    },
    help: 'Grace period of each soft threshold (e.g. memory.available=1m30s)',
    apply: (s, r) => {
      s.evictionSoftGracePeriodMs = { ...(s.evictionSoftGracePeriodMs ?? {}), ...parseGracePeriodMap(parseSignalMap(r, '=')) };
    },
  },
  {
    name: 'healthz-port',
    type: 'int',
    default: '10248',
    upstream: true,
    config: 'healthzPort',
    help: 'Port of the healthz server (0 picks a free port, for tests)',
    apply: (s, r) => {
      s.healthzPort = parsePort(r, true);
    },
  },
  {
    name: 'hostname-override',
    type: 'string',
    default: '',
    upstream: true,
    help: 'Node name to use instead of the host name',
    apply: (s, r) => {
      s.hostnameOverride = r;
    },
  },
  {
    name: 'image-gc-high-threshold',
    type: 'int',
    default: '85',
    upstream: true,
    config: 'imageGCHighThresholdPercent',
    help: 'Disk usage percent at which image garbage collection always runs',
    apply: (s, r) => {
      s.imageGCHighThresholdPercent = parsePercent(r);
    },
  },
  {
    name: 'image-gc-low-threshold',
    type: 'int',
    default: '80',
    upstream: true,
    config: 'imageGCLowThresholdPercent',
    help: 'Disk usage percent image garbage collection frees down to (below the high threshold)',
    apply: (s, r) => {
      s.imageGCLowThresholdPercent = parsePercent(r);
    },
  },
  {
    name: 'kubeconfig',
    type: 'string',
    default: '',
    upstream: true,
    help: 'kubeconfig for the API server; without it nodelet runs standalone (static pods only)',
    apply: (s, r) => {
      s.kubeconfig = parsePath(r);
    },
  },
  {
    name: 'max-pods',
    type: 'int',
    default: '110',
    upstream: true,
    config: 'maxPods',
    help: 'Number of pods this node can run',
    apply: (s, r) => {
      s.maxPods = parsePositiveInt(r);
    },
  },
  {
    name: 'node-ip',
    type: 'ip',
    default: '',
    upstream: true,
    help: 'IP address of the node reported in its status',
    apply: (s, r) => {
      s.nodeIP = parseIP(r);
    },
  },
  {
    name: 'pod-cidr',
    type: 'string',
    default: '',
    upstream: true,
    config: 'podCIDR',
    help: "The CIDR for pod IPs in standalone mode (in a cluster the node's spec.podCIDR wins)",
    apply: (s, r) => {
      s.podCIDR = parsePodCIDRs(r);
    },
  },
  {
    name: 'pod-interface',
    type: 'string',
    default: 'nodelet0',
    upstream: false,
    help: 'The bridge nodelet creates to hold pod IPs (one per nodelet on a machine)',
    apply: (s, r) => {
      s.podInterface = parseInterfaceName(r);
    },
  },
  {
    name: 'pod-routes',
    type: 'string',
    default: 'none',
    upstream: false,
    help: "Routes to other nodes' pod CIDRs nodelet installs: host-gw (each via the node's InternalIP, for nodes on one L2 segment) or none",
    apply: (s, r) => {
      s.podRoutes = parsePodRoutes(r);
    },
  },
  {
    name: 'node-labels',
    type: 'mapStringString',
    default: '',
    upstream: true,
    help: 'Labels to add when registering, key=value,... (kubernetes.io/ and k8s.io/ keys only from the kubelet-allowed set)',
    apply: (s, r) => {
      s.nodeLabels = { ...s.nodeLabels, ...parseNodeLabels(r) };
    },
  },
  {
    name: 'node-status-update-frequency',
    type: 'duration',
    default: '10s',
    upstream: true,
    config: 'nodeStatusUpdateFrequency',
    help: 'How often node status is computed (and posted when changed)',
    apply: (s, r) => {
      s.nodeStatusUpdateFrequencyMs = parsePositiveDuration(r);
    },
  },
  {
    name: 'pod-manifest-path',
    type: 'string',
    default: '<bundled examples/static-pods when standalone>',
    upstream: true,
    config: 'staticPodPath',
    fromConfig: (s, v, dir) => {
      s.podManifestPath = filePath(v, dir);
    },
    help: 'Directory (or file) of static pod manifests',
    apply: (s, r) => {
      s.podManifestPath = parsePath(r);
    },
  },
  {
    name: 'port',
    type: 'int',
    default: '10250',
    upstream: true,
    config: 'port',
    help: 'Port of the kubelet API (HTTPS; 0 picks a free port, for tests)',
    apply: (s, r) => {
      s.port = parsePort(r, true);
    },
  },
  {
    name: 'register-node',
    type: 'bool',
    default: 'true',
    upstream: true,
    config: 'registerNode',
    help: 'Register the node with the API server',
    apply: (s, r) => {
      s.registerNode = parseBool(r);
    },
  },
  {
    name: 'register-with-taints',
    type: 'string',
    default: '',
    upstream: true,
    config: 'registerWithTaints',
    fromConfig: (s, v) => {
      s.registerWithTaints = taintList(v);
    },
    help: 'Taints to register the node with, key=value:Effect,...',
    apply: (s, r) => {
      s.registerWithTaints = parseTaints(r);
    },
  },
  {
    name: 'root-dir',
    type: 'string',
    default: '/var/lib/nodelet',
    upstream: true,
    help: 'Directory for nodelet state (pods, plugins, logs, certificates)',
    apply: (s, r) => {
      s.rootDir = parsePath(r);
    },
  },
  {
    name: 'rotate-certificates',
    type: 'bool',
    default: 'false',
    upstream: true,
    config: 'rotateCertificates',
    help: 'Rotate the client certificate through CSRs before it expires (config: rotateCertificates)',
    apply: (s, r) => {
      s.rotateCertificates = parseBool(r);
    },
  },
  {
    name: 'rotate-server-certificates',
    type: 'bool',
    default: 'false',
    upstream: true,
    config: 'serverTLSBootstrap',
    help: 'Request the serving certificate through kubernetes.io/kubelet-serving CSRs and rotate it (config: serverTLSBootstrap)',
    apply: (s, r) => {
      s.serverTLSBootstrap = parseBool(r);
    },
  },
  {
    name: 'volume-stats-agg-period',
    type: 'duration',
    default: '1m0s',
    upstream: true,
    config: 'volumeStatsAggPeriod',
    help: 'Specifies interval for kubelet to calculate and cache the volume disk usage for all pods and volumes (CSI NodeGetVolumeStats); a negative value turns volume stats off (config: volumeStatsAggPeriod)',
    apply: (s, r) => {
      s.volumeStatsAggPeriodMs = parseGoDuration(r);
    },
  },
  {
    name: 'file-check-frequency',
    type: 'duration',
    default: '20s',
    upstream: true,
    config: 'fileCheckFrequency',
    help: 'Duration between checking config files for new data (the static pod manifests; a file watch sees most changes at once)',
    apply: (s, r) => {
      s.fileCheckFrequencyMs = parsePositiveDuration(r);
    },
  },
  {
    name: 'sync-frequency',
    type: 'duration',
    default: '1m0s',
    upstream: true,
    config: 'syncFrequency',
    help: 'Maximum period between pod syncs',
    apply: (s, r) => {
      s.syncFrequencyMs = parsePositiveDuration(r);
    },
  },
  {
    name: 'tls-cert-file',
    type: 'string',
    default: '',
    upstream: true,
    config: 'tlsCertFile',
    fromConfig: (s, v, dir) => {
      s.tlsCertFile = filePath(v, dir);
    },
    help: 'Serving certificate of the kubelet API (otherwise one is made in --cert-dir)',
    apply: (s, r) => {
      s.tlsCertFile = parsePath(r);
    },
  },
  {
    name: 'tls-private-key-file',
    type: 'string',
    default: '',
    upstream: true,
    config: 'tlsPrivateKeyFile',
    fromConfig: (s, v, dir) => {
      s.tlsPrivateKeyFile = filePath(v, dir);
    },
    help: 'Private key matching --tls-cert-file',
    apply: (s, r) => {
      s.tlsPrivateKeyFile = parsePath(r);
    },
  },
  {
    name: 'logging-format',
    type: 'string',
    default: '',
    upstream: true,
    config: 'logging.format',
    help: 'Log format: text or json (default: text when stderr is a terminal, else json)',
    apply: (s, r) => {
      s.loggingFormat = parseLogFormat(r);
    },
  },
  {
    name: 'v',
    type: 'level',
    default: '0',
    upstream: true,
    config: 'logging.verbosity',
    help: 'Log verbosity: 0-1 info, 2-3 debug, 4+ trace (a level name is accepted too)',
    apply: (s, r) => {
      s.verbosityLevel = parseVerbosity(r);
    },
  },
  // nodelet's own flags
  {
    name: 'default-provider',
    type: 'string',
    default: 'wasi',
    upstream: false,
    help: 'Provider for pods whose RuntimeClass names none',
    apply: (s, r) => {
      s.defaultProvider = nonEmpty(r);
    },
  },
  {
    name: 'default-taint',
    type: 'bool',
    default: 'true',
    upstream: false,
    help: 'Register with the taint kubernetes.io/arch=wasm32-wasi:NoSchedule',
    apply: (s, r) => {
      s.defaultTaint = parseBool(r);
    },
  },
  {
    name: 'device-endpoint-grace-period',
    type: 'duration',
    default: '5m0s',
    upstream: false,
    help: "How long a stopped device plugin's resource keeps its capacity (allocatable drops to 0 at once) before it is reported as 0",
    apply: (s, r) => {
      s.deviceEndpointGracePeriodMs = parsePositiveDuration(r);
    },
  },
  {
    name: 'cdi-spec-dirs',
    type: 'strings',
    default: '/etc/cdi,/var/run/cdi',
    upstream: false,
    help: 'Directories of CDI spec files, for the CDI devices DRA drivers return (later ones win), comma-separated or repeated',
    apply: (s, r) => {
      s.cdiSpecDirs = [...(s.cdiSpecDirs ?? []), ...parseList(r)];
    },
  },
  {
    name: 'dra-plugin-deregistration-grace-period',
    type: 'duration',
    default: '30s',
    upstream: false,
    help: "How long a deregistered DRA driver's ResourceSlices of this node stay before they are deleted (upstream's fixed 30s)",
    apply: (s, r) => {
      s.draDeregistrationGracePeriodMs = parsePositiveDuration(r);
    },
  },
  {
    name: 'image-pull-progress-deadline',
    type: 'duration',
    default: '5m0s',
    upstream: false,
    help: "A registry response (manifest, blob, token) that sends nothing for this long fails the pull (containerd's image_pull_progress_timeout)",
    apply: (s, r) => {
      s.imagePullProgressDeadlineMs = parsePositiveDuration(r);
    },
  },
  {
    name: 'insecure-registries',
    type: 'strings',
    default: '',
    upstream: false,
    help: 'Registries (host[:port]) pulled over plain HTTP, comma-separated or repeated',
    apply: (s, r) => {
      s.insecureRegistries = [...(s.insecureRegistries ?? []), ...parseList(r)];
    },
  },
  {
    name: 'log-level',
    type: 'string',
    default: 'info',
    upstream: false,
    help: 'Log level: trace, debug, info, warn, error (overrides --v)',
    apply: (s, r) => {
      s.logLevel = parseLogLevel(r);
    },
  },
  {
    name: 'max-container-restart-period',
    type: 'duration',
    default: '5m0s',
    upstream: false,
    config: 'crashLoopBackOff.maxContainerRestartPeriod',
    help: 'Longest back-off between restarts of a crashing container (CrashLoopBackOff), 1s to 300s; the first back-off is 10s or this if shorter (KubeletCrashLoopBackOffMax; upstream: config file only)',
    apply: (s, r) => {
      s.maxContainerRestartPeriodMs = parseMaxContainerRestartPeriod(r);
    },
  },
  {
    name: 'node-lease-duration-seconds',
    type: 'int',
    default: '40',
    upstream: false,
    config: 'nodeLeaseDurationSeconds',
    help: 'Node Lease duration (upstream: config file only); renewed every quarter of it',
    apply: (s, r) => {
      s.nodeLeaseDurationSeconds = parsePositiveInt(r);
    },
  },
  {
    name: 'node-status-report-frequency',
    type: 'duration',
    default: '5m0s',
    upstream: false,
    config: 'nodeStatusReportFrequency',
    help: 'How often node status is posted when unchanged (upstream: config file only)',
    apply: (s, r) => {
      s.nodeStatusReportFrequencyMs = parsePositiveDuration(r);
    },
  },
  {
    name: 'provider-config',
    type: 'mapStringString',
    default: '',
    upstream: false,
    help: "A provider's configuration file (YAML or JSON), NAME=PATH, comma-separated or repeated; handed to the provider named NAME",
    apply: (s, r) => {
      s.providerConfig = { ...s.providerConfig, ...parseProviderConfig(r) };
    },
  },
  {
    name: 'providers-dir',
    type: 'strings',
    default: '<root-dir>/providers,<bundled providers>',
    upstream: false,
    help: 'Directories searched for provider packages, comma-separated or repeated',
    apply: (s, r) => {
      s.providersDir = [...(s.providersDir ?? []), ...parseList(r).map(parsePath)];
    },
  },
  {
    name: 'shutdown-grace-period',
    type: 'duration',
    default: '0s',
    upstream: false,
    config: 'shutdownGracePeriod',
    help: 'Graceful node shutdown: how long the node delays shutdown to stop its pods; 0s disables it (upstream: config file only)',
    apply: (s, r) => {
      s.shutdownGracePeriodMs = parseDuration(r);
    },
  },
  {
    name: 'shutdown-grace-period-critical-pods',
    type: 'duration',
    default: '0s',
    upstream: false,
    config: 'shutdownGracePeriodCriticalPods',
    help: 'The part of --shutdown-grace-period kept for critical pods, stopped last (upstream: config file only)',
    apply: (s, r) => {
      s.shutdownGracePeriodCriticalPodsMs = parseDuration(r);
    },
  },
];

function nonEmpty(raw: string): string {
  if (raw.trim() === '') throw nodeletError('NDL_CONFIG_INVALID_VALUE', 'must not be empty');
  return raw.trim();
}

const BY_NAME = new Map(FLAGS.map((f) => [f.name, f]));

/** Looks a flag up by name (without dashes). */
export function findFlag(name: string): FlagSpec | undefined {
  return BY_NAME.get(name);
}

/** `NAME=PATH,...`: provider names (DNS labels) to configuration files. */
function parseProviderConfig(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of parseList(text)) {
    const eq = item.indexOf('=');
    const name = eq < 0 ? '' : item.slice(0, eq);
    if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(name) || eq === item.length - 1) {
      throw nodeletError('NDL_CONFIG_INVALID_VALUE', `${JSON.stringify(item)} is not NAME=PATH (NAME a provider name, a DNS label)`);
    }
    out[name] = parsePath(item.slice(eq + 1));
  }
  return out;
}

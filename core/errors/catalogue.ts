/**
 * The one error catalogue of nodelet. Every error nodelet reports to a user
 * (CLI, logs, pod status, events, plugin registration replies) has a code
 * here, so the same failure reads the same everywhere.
 *
 * Add new codes to the table below, grouped by area; keep messages one line,
 * and give each a section in docs/errors.md (a unit test checks both agree).
 */
export const CATALOGUE = {
  // configuration and command line
  NDL_CONFIG_UNKNOWN_FLAG: 'unknown flag',
  NDL_CONFIG_INVALID_VALUE: 'invalid flag value',
  NDL_CONFIG_FILE: 'invalid KubeletConfiguration file',
  NDL_CONFIG_UNEXPECTED_ARG: 'unexpected argument',
  NDL_CLI_FILE: 'cannot read input file',
  // provider loading
  NDL_PROVIDER_MANIFEST: 'provider manifest missing or unreadable',
  NDL_PROVIDER_MANIFEST_INVALID: 'provider manifest invalid',
  NDL_PROVIDER_API_VERSION: 'provider apiVersion not supported',
  NDL_PROVIDER_ENTRY_OUTSIDE: 'provider entry resolves outside its package',
  NDL_PROVIDER_IMPORT: 'provider entry failed to import',
  NDL_PROVIDER_SHAPE: 'provider export has the wrong shape',
  NDL_PROVIDER_INIT: 'provider failed to initialise',
  NDL_PROVIDER_CONFIG: 'provider configuration file unreadable or invalid',
  NDL_PROVIDER_DUPLICATE: 'provider name or handler already taken',
  // images
  NDL_IMAGE_REFERENCE: 'invalid image reference',
  NDL_IMAGE_PULL: 'image pull failed',
  NDL_IMAGE_DIGEST: 'image content does not match its digest',
  NDL_IMAGE_FORMAT: 'unsupported image format',
  NDL_IMAGE_NEVER_PULL: 'image not present and pull policy is Never',
  // volumes and paths
  NDL_PATH_ESCAPE: 'path escapes its root',
  NDL_VOLUME_PLUGIN_DUPLICATE: 'volume plugin already registered',
  NDL_VOLUME_SOURCE: 'volume source unavailable',
  NDL_VOLUME_UNSUPPORTED: 'volume type not supported',
  NDL_VOLUME_TMPFS: 'tmpfs mount or unmount failed',
  NDL_POD_CERTIFICATE: 'pod certificate not issued',
  NDL_CSI_DRIVER: 'CSI driver unavailable',
  NDL_CSI_NODE_INFO: 'CSI node info update failed',
  NDL_CSI_VOLUME: 'CSI volume operation failed',
  // pods
  NDL_POD_INVALID: 'invalid pod spec',
  NDL_DOWNWARD_API: 'downward API field cannot be resolved',
  NDL_POD_ADMISSION: 'pod rejected at admission',
  NDL_CONTAINER_CONFIG: 'container config unavailable',
  NDL_TERMINATION_MESSAGE: 'termination message unreadable',
  NDL_POD_DIRS: 'pod directory cannot be made',
  // pod network
  NDL_NETWORK_CIDR: 'pod CIDR unusable',
  NDL_NETWORK_EXHAUSTED: 'no free IP in the pod CIDR',
  NDL_NETWORK_STATE: 'pod IP allocation state unusable',
  NDL_NETWORK_INTERFACE: 'pod interface operation failed',
  NDL_SERVICES_WATCH: 'Services or EndpointSlices cannot be listed or watched',
  NDL_NETWORK_ROUTE: 'pod route operation failed',
  // kubelet API
  NDL_API_UNAUTHORIZED: 'unauthorized',
  NDL_API_NOT_SUPPORTED: 'not supported by provider',
  NDL_API_SERVING_CERT: 'kubelet serving certificate unusable',
  NDL_API_UPGRADE: 'unable to upgrade',
  NDL_API_PORT_FORWARD: 'error forwarding port',
  NDL_API_ATTACH: 'error attaching to container',
  NDL_API_SPDY: 'SPDY protocol error',
  // certificates (TLS bootstrap and rotation)
  NDL_TLS_BOOTSTRAP: 'TLS bootstrap failed',
  NDL_CERT_STORE: 'certificate store unusable',
  NDL_CERT_PEM: 'certificate or key PEM unusable',
  NDL_API_TOKEN_REVIEW: 'TokenReview of a kubelet API bearer token failed',
  NDL_API_ACCESS_REVIEW: 'SubjectAccessReview of a kubelet API request failed',
  // plugin registration
  NDL_PLUGIN_TYPE: 'unsupported plugin type',
  NDL_PLUGIN_VERSION: 'unsupported plugin version',
  NDL_PLUGIN_VALIDATION: 'plugin failed validation',
  NDL_PLUGIN_DIAL: 'cannot reach plugin socket',
  NDL_PLUGIN_INFO: 'plugin GetInfo failed',
  NDL_PLUGIN_REGISTER: 'plugin handler failed to register plugin',
  NDL_PLUGIN_NOTIFY: 'cannot send registration status to plugin',
  // devices (device plugins)
  NDL_DEVICE_ALLOCATE: 'device allocation failed',
  NDL_DEVICE_PLUGIN_RPC: 'device plugin call failed',
  NDL_DEVICE_CHECKPOINT: 'device manager checkpoint unusable',
  // dynamic resource allocation (DRA drivers)
  NDL_DRA_PREPARE: 'failed to prepare dynamic resources',
  NDL_DRA_UNPREPARE: 'failed to unprepare dynamic resources',
  NDL_DRA_CHECKPOINT: 'DRA manager checkpoint unusable',
  NDL_DRA_DRIVER_RPC: 'DRA driver call failed',
  // in-place pod resize
  NDL_ALLOCATION_CHECKPOINT: 'pod resource allocation checkpoint unusable',
  // API server and shared helpers
  NDL_API_CLIENT: 'API client misconfigured',
  NDL_API_REQUEST: 'API server request failed',
  NDL_QUANTITY: 'invalid quantity',
  NDL_RETRY_EXHAUSTED: 'retries exhausted',
} as const;

/** A catalogued error code. */
export type ErrorCode = keyof typeof CATALOGUE;

const BRAND = Symbol.for('nodelet.dev/NodeletError');

/** An error with a catalogued code; `message` is `<catalogue text>: <detail>`. */
export interface NodeletError extends Error {
  readonly code: ErrorCode;
  readonly detail: string;
}

/** Creates a catalogued error. */
export function nodeletError(code: ErrorCode, detail: string, cause?: unknown): NodeletError {
  const err = new Error(`${CATALOGUE[code]}: ${detail}`, { cause }) as Error & Record<string | symbol, unknown>;
  err.name = 'NodeletError';
  err.code = code;
  err.detail = detail;
  Object.defineProperty(err, BRAND, { value: true });
  return err as unknown as NodeletError;
}

/** The text to show for `e` inside another message: a catalogued error's `detail` (upstream wording), else its `message`. */
export function errorDetail(e: unknown): string {
  if (isNodeletError(e)) return e.detail;
  return e instanceof Error ? e.message : String(e);
}

/** True for an error made by {@link nodeletError}, optionally with the given code. */
export function isNodeletError(e: unknown, code?: ErrorCode): e is NodeletError {
  if (typeof e !== 'object' || e === null || (e as Record<symbol, unknown>)[BRAND] !== true) return false;
  return code === undefined || (e as NodeletError).code === code;
}

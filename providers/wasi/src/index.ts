/**
 * @nodelet/provider-wasi: runs WebAssembly/WASI preview1 modules as containers.
 * The host loads this entry and calls the default export.
 */
import type { Provider } from '@nodelet/plugin-api/v1';
import { WasiProvider, type WasiProviderOptions } from './wasi-provider.ts';
import { ExternalWasiProvider } from './runtime/external-provider.ts';
import { optionsFromEnv } from './env-options.ts';

export { WasiProvider, WASM_LAYER_TYPES, DEFAULT_RESOURCE_LIMITS, type WasiProviderOptions } from './wasi-provider.ts';
export { capModuleMemory, WASM_PAGE, type MemoryDecl } from './memory-cap.ts';
export { TRAP_EXIT_CODE, KILLED_EXIT_CODE } from './wasi-container.ts';
export { CONTAINER_START_CHANNEL, CONTAINER_END_CHANNEL, type ContainerStartEvent, type ContainerEndEvent } from './module-run.ts';
export { DEFAULT_CONTAINER_MAX_FDS, MAX_CONTAINER_MAX_FDS, defaultNodeMaxFds, fdsInUse, makeFdBudget, processFdLimit } from './fd-budget.ts';
export { ExternalWasiProvider, LOST_EXIT } from './runtime/external-provider.ts';
export { PROTOCOL_VERSION, PROTOCOL_MINOR, SOCKET_NAME, PID_FILE_NAME, LOG_FILE_NAME, OUT_FILE_NAME } from './runtime/protocol.ts';
export { RotatingLog, RUNTIME_LOG_MAX_BYTES, RUNTIME_LOG_FILES } from './runtime/runtime-log.ts';
export { runtimePid } from './runtime/spawn-runtime.ts';
export { DEFAULT_START_TIMEOUT_MS } from './container-runner.ts';
export type { FdBudget } from './worker-protocol.ts';
export { WorkerPool, DEFAULT_POOL_SIZE, DEFAULT_MAX_BOOTING, type WorkerPoolOptions } from './worker-pool.ts';
export { SharedThreads, DEFAULT_SHARED_THREADS, DEFAULT_SHARED_RESOURCE_LIMITS, type SharedThreadsOptions } from './shared-threads.ts';
export { placement } from './container-runner.ts';
export { optionsFromEnv } from './env-options.ts';
export {
  ALLOWED_OUTBOUND_HOSTS_ANNOTATION,
  AllowedHostError,
  allowsDestination,
  allowsRelative,
  allowsUrl,
  parseAllowedHost,
  parseAllowedHosts,
  parseAllowedOutboundHostsAnnotation,
  wellKnownPort,
  type AllowedHost,
  type Destination,
  type OutboundPolicy,
} from './outbound-hosts.mjs';

/**
 * Creates the `wasi` provider. nodelet calls this without options; these
 * environment variables of nodelet's process set them instead:
 *  - `NODELET_WASI_MAX_OPEN_FILES`: descriptors per container (`maxOpenFiles`);
 *  - `NODELET_WASI_NODE_MAX_OPEN_FILES`: descriptors of all containers (`nodeMaxOpenFiles`);
 *  - `NODELET_WASI_START_TIMEOUT_MS`: instantiation timeout in ms (`startTimeoutMs`);
 *  - `NODELET_WASI_SHARED_THREADS`: threads shared by BestEffort pods (`sharedThreads`; 0: none);
 *  - `NODELET_WASI_RUNTIME`: `external` (the default: modules run in the WASI runtime process,
 *    which outlives nodelet: see README.md) or `in-process` (modules run in nodelet's worker threads).
 * A malformed value makes the factory throw (nodelet reports the provider as not loaded).
 */
export function createProvider(opts: WasiProviderOptions = {}): Provider {
  const mode = runtimeMode(process.env);
  const inProcess = new WasiProvider({ ...optionsFromEnv(process.env), ...opts });
  // The runtime process reads the NODELET_WASI_* options itself (it inherits nodelet's environment).
  return mode === 'external' ? new ExternalWasiProvider(inProcess.runtimeVersion) : inProcess;
}

/** Where the modules run, from `NODELET_WASI_RUNTIME` (`external` when unset). */
export function runtimeMode(env: NodeJS.ProcessEnv): 'in-process' | 'external' {
  const raw = env.NODELET_WASI_RUNTIME ?? '';
  if (raw === 'in-process') return 'in-process';
  if (raw === '' || raw === 'external') return 'external';
  throw new RangeError(`NODELET_WASI_RUNTIME must be in-process or external, not ${JSON.stringify(raw)}`);
}

export default createProvider;

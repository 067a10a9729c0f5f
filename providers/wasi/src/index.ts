/**
 * @nodelet/provider-wasi: runs WebAssembly/WASI preview1 modules as containers.
 * The host loads this entry and calls the default export.
 */
import type { Provider } from '@nodelet/plugin-api/v1';
import { WasiProvider, type WasiProviderOptions } from './wasi-provider.ts';

export { WasiProvider, WASM_LAYER_TYPES, DEFAULT_RESOURCE_LIMITS, type WasiProviderOptions } from './wasi-provider.ts';
export { capModuleMemory, WASM_PAGE, type MemoryDecl } from './memory-cap.ts';
export {
  TRAP_EXIT_CODE, KILLED_EXIT_CODE, CONTAINER_START_CHANNEL, CONTAINER_END_CHANNEL, type ContainerStartEvent, type ContainerEndEvent,
} from './container-runner.ts';
export { WorkerPool, DEFAULT_POOL_SIZE, DEFAULT_MAX_BOOTING, type WorkerPoolOptions } from './worker-pool.ts';

/** Creates the `wasi` provider. */
export function createProvider(opts: WasiProviderOptions = {}): Provider {
  return new WasiProvider(opts);
}

export default createProvider;

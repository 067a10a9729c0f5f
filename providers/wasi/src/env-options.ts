/**
 * The provider's options from the NODELET_WASI_* environment variables (see
 * createProvider in index.ts): read by the provider, by the runtime process and
 * by `nodelet run`'s in-thread run (run-once.ts), which loads nothing else of
 * the provider's.
 */
import type { WasiProviderOptions } from './wasi-provider.ts';

/** The options set by the NODELET_WASI_* environment variables (createProvider in index.ts lists them). */
export function optionsFromEnv(env: NodeJS.ProcessEnv): WasiProviderOptions {
  const int = (name: string): number | undefined => {
    const raw = env[name];
    if (raw === undefined || raw === '') return undefined;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`${name} must be a positive integer, not ${JSON.stringify(raw)}`);
    return n;
  };
  const out: { -readonly [K in keyof WasiProviderOptions]: WasiProviderOptions[K] } = {};
  const maxOpenFiles = int('NODELET_WASI_MAX_OPEN_FILES');
  const nodeMaxOpenFiles = int('NODELET_WASI_NODE_MAX_OPEN_FILES');
  const startTimeoutMs = int('NODELET_WASI_START_TIMEOUT_MS');
  const shared = env.NODELET_WASI_SHARED_THREADS;
  if (shared !== undefined && shared !== '') {
    const n = Number(shared);
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`NODELET_WASI_SHARED_THREADS must be a non-negative integer, not ${JSON.stringify(shared)}`);
    out.sharedThreads = n;
  }
  if (maxOpenFiles !== undefined) out.maxOpenFiles = maxOpenFiles;
  if (nodeMaxOpenFiles !== undefined) out.nodeMaxOpenFiles = nodeMaxOpenFiles;
  if (startTimeoutMs !== undefined) out.startTimeoutMs = startTimeoutMs;
  return out;
}

/**
 * Compiling a module's bytes into a WASI preview1 command nodelet can run, and
 * what makes it one: an exported `_start`, imports only of the functions
 * node:wasi provides (and Krustlet's `wasi_experimental_http`), one memory,
 * exported or imported. The provider's module cache (module-cache.ts) and the
 * in-thread run of `nodelet run` (run-once.ts) both compile modules with
 * {@link compileCommandModule}, so both refuse a module with the same error;
 * kept apart from the cache so that the latter loads none of the provider's rewrites,
 * and free of the provider API at run time (its refusals are {@link ModuleRefused},
 * which the provider brands with `providerError`), which `nodelet run` would load only
 * to print a message.
 */
import type { ProviderErrorCode } from '@nodelet/plugin-api/v1';
import { capModuleMemory, MemoryCapError, type CappedModule, type MemoryDecl } from './memory-cap.ts';

/** The WASI preview1 functions node:wasi provides (module `wasi_snapshot_preview1`). */
export const WASI_PREVIEW1_FUNCTIONS: ReadonlySet<string> = new Set([
  'args_get',
  'args_sizes_get',
  'environ_get',
  'environ_sizes_get',
  'clock_res_get',
  'clock_time_get',
  'fd_advise',
  'fd_allocate',
  'fd_close',
  'fd_datasync',
  'fd_fdstat_get',
  'fd_fdstat_set_flags',
  'fd_fdstat_set_rights',
  'fd_filestat_get',
  'fd_filestat_set_size',
  'fd_filestat_set_times',
  'fd_pread',
  'fd_prestat_get',
  'fd_prestat_dir_name',
  'fd_pwrite',
  'fd_read',
  'fd_readdir',
  'fd_renumber',
  'fd_seek',
  'fd_sync',
  'fd_tell',
  'fd_write',
  'path_create_directory',
  'path_filestat_get',
  'path_filestat_set_times',
  'path_link',
  'path_open',
  'path_readlink',
  'path_remove_directory',
  'path_rename',
  'path_symlink',
  'path_unlink_file',
  'poll_oneoff',
  'proc_exit',
  'proc_raise',
  'sched_yield',
  'random_get',
  'sock_accept',
  'sock_recv',
  'sock_send',
  'sock_shutdown',
]);

/**
 * Why a module cannot run: the provider error it stands for (`code`, `reason`) without
 * its brand. module-cache.ts turns it into `providerError(code, message, { reason })`;
 * `nodelet run` prints its message.
 */
export class ModuleRefused extends Error {
  readonly reason: string;
  constructor(
    readonly code: Extract<ProviderErrorCode, 'InvalidImage' | 'InvalidArgument'>,
    message: string,
    opts: { reason?: string; cause?: unknown } = {},
  ) {
    super(message, { cause: opts.cause });
    this.name = 'ModuleRefused';
    this.reason = opts.reason ?? code;
  }
}

/** Krustlet's outbound HTTP functions for preview1 modules (module `wasi_experimental_http`). */
export const EXPERIMENTAL_HTTP_FUNCTIONS: ReadonlySet<string> = new Set(['req', 'close', 'header_get', 'headers_get_all', 'body_read']);

/**
 * Throws {@link ModuleRefused} (`InvalidImage`) naming what is missing or not
 * provided when `module` (with its declared `memories`) is not a runnable command.
 */
function checkCommandModule(module: WebAssembly.Module, memories: readonly MemoryDecl[], image: string): void {
  const bad = (why: string) => new ModuleRefused('InvalidImage', `image ${image} is not a WASI preview1 command module: ${why}`);
  const exports = WebAssembly.Module.exports(module);
  if (!exports.some((e) => e.name === '_start' && e.kind === 'function')) throw bad('it exports no _start function (a reactor or library module?)');
  for (const imp of WebAssembly.Module.imports(module)) {
    if (imp.kind === 'memory') continue;
    if (imp.kind === 'function' && imp.module === 'wasi_experimental_http' && EXPERIMENTAL_HTTP_FUNCTIONS.has(imp.name)) continue;
    if (imp.module !== 'wasi_snapshot_preview1' || imp.kind !== 'function' || !WASI_PREVIEW1_FUNCTIONS.has(imp.name)) {
      throw bad(`it imports ${imp.kind} ${imp.module}.${imp.name}, which nodelet does not provide`);
    }
  }
  if (memories.length !== 1) throw bad(`it has ${memories.length} memories, WASI needs exactly one`);
  const exported = exports.some((e) => e.name === 'memory' && e.kind === 'memory');
  if (!exported && memories[0]!.import === undefined) throw bad('it does not export its memory as "memory"');
}

/**
 * Bounds `bytes`' memories with `bound` (default: as declared, memory-cap.ts; the provider
 * passes its cap or changeable limit), compiles the result with `compile` (default
 * `WebAssembly.compile`; `nodelet run` passes one that may take the module from its cache)
 * and checks it with {@link checkCommandModule}. Resolves to the module and `bound`'s
 * result. Rejects with {@link ModuleRefused}: `InvalidImage` for bytes that are not a
 * runnable WASI preview1 command of image `image`, and `InvalidArgument` (reason
 * `OOMKilled`) when its minimum memory exceeds the cap.
 */
export async function compileCommandModule<C extends CappedModule = CappedModule>(
  bytes: Uint8Array,
  image: string,
  bound: (bytes: Uint8Array) => C = (b) => capModuleMemory(b) as C,
  compile: (bytes: Uint8Array<ArrayBuffer>) => Promise<WebAssembly.Module> = (b) => WebAssembly.compile(b),
): Promise<{ readonly module: WebAssembly.Module; readonly capped: C }> {
  let capped: C;
  try {
    capped = bound(bytes);
  } catch (e) {
    if (e instanceof MemoryCapError && e.kind === 'too-small') {
      throw new ModuleRefused('InvalidArgument', `image ${image}: ${e.message}`, { reason: 'OOMKilled', cause: e });
    }
    throw new ModuleRefused('InvalidImage', `image ${image} is not a valid WebAssembly module: ${(e as Error).message}`, { cause: e });
  }
  let module: WebAssembly.Module;
  try {
    module = await compile(capped.bytes as Uint8Array<ArrayBuffer>);
  } catch (e) {
    throw new ModuleRefused('InvalidImage', `image ${image} is not a valid WebAssembly module: ${(e as Error).message}`, { cause: e });
  }
  checkCommandModule(module, capped.memories, image);
  return { module, capped };
}

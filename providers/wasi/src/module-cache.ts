import { readFile } from 'node:fs/promises';
import { providerError, type PulledImage } from '@nodelet/plugin-api/v1';
import { capModuleMemory, checkMemoryFits, MemoryCapError, type CappedModule, type MemoryDecl } from './memory-cap.ts';
import { addPreemption } from './preemption.ts';
import { limitGrow, limitPages } from './grow-limit.ts';

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

/** A compiled, validated module ready to be sent to a worker. */
export interface LoadedModule {
  /** Compiled once; structured-cloned (not recompiled) into each worker. */
  readonly module: WebAssembly.Module;
  /** Memories after capping. */
  readonly memories: readonly MemoryDecl[];
  /** The imported ones among them, which the worker creates. */
  readonly importedMemories: readonly MemoryDecl[];
  /** The memory cap applied, in bytes. */
  readonly capBytes?: number;
  /**
   * Why its memory limit cannot change while it runs; undefined when its `memory.grow` asks a
   * limit the worker can change (grow-limit.ts: `resizeContainer`).
   */
  readonly notResizable?: string;
  /** How long reading + compiling took (0 when it came from the cache). */
  readonly compileMs: number;
  /** It imports `sock_accept`: its container ports are pre-opened as listening sockets (worker/wasi-sockets.mjs). */
  readonly acceptsSockets: boolean;
  /** It imports Krustlet's `wasi_experimental_http` functions (worker/wasi-experimental-http.mjs). */
  readonly experimentalHttp: boolean;
  /** It has a start section, run inside instantiation (never on a shared thread: a loop there would hold it). */
  readonly startFunction?: boolean;
  /**
   * The module with preemption points (preemption.ts), for a shared thread: compiled on first
   * use and kept with the entry; the module as it is when the rewrite does not apply.
   */
  readonly preemptible: () => Promise<WebAssembly.Module>;
}

/** Krustlet's outbound HTTP functions for preview1 modules (module `wasi_experimental_http`). */
export const EXPERIMENTAL_HTTP_FUNCTIONS: ReadonlySet<string> = new Set(['req', 'close', 'header_get', 'headers_get_all', 'body_read']);

/**
 * Compiled modules by image digest, memory cap and resizability, least recently used
 * dropped beyond `maxEntries`. Concurrent loads of the same key share one
 * compile; failures are not cached (a fixed image is picked up on restart).
 */
export class ModuleCache {
  private readonly entries = new Map<string, Promise<LoadedModule>>();

  /** @param maxEntries how many compiled modules to keep */
  constructor(private readonly maxEntries = 32) {}

  /** Number of cached modules. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Returns the compiled module of `image`, capped to `capBytes` of linear
   * memory. With `resizable`, the cap is not its memory's maximum but a limit its
   * `memory.grow` asks (grow-limit.ts), which can change while it runs; a module
   * that cannot be rewritten so is capped as without it (`notResizable` says why).
   * Rejects with a branded `InvalidImage` error for a file that is not a
   * runnable WASI preview1 command, and `InvalidArgument` (reason `OOMKilled`)
   * when the module's minimum memory exceeds the cap.
   */
  async load(image: PulledImage, capBytes?: number, resizable = false): Promise<LoadedModule> {
    const key = `${image.digest}|${capBytes ?? ''}|${resizable ? 'resizable' : ''}`;
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return { ...(await hit), compileMs: 0 };
    }
    const p = compile(image, capBytes, resizable);
    this.entries.set(key, p);
    p.catch(() => {
      if (this.entries.get(key) === p) this.entries.delete(key);
    });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return p;
  }

  /** Forgets every compiled module. */
  clear(): void {
    this.entries.clear();
  }
}

/** The module's bytes with its memory bounded: by a limit it asks (`resizable`, grow-limit.ts) when that works, else by a capped maximum. */
function bound(bytes: Uint8Array, capBytes: number | undefined, resizable: boolean): CappedModule & { notResizable?: string } {
  if (!resizable) return { ...capModuleMemory(bytes, capBytes), notResizable: 'its pod is BestEffort: it has no limit to change' };
  const parsed = capModuleMemory(bytes);
  checkMemoryFits(parsed.memories, capBytes);
  const limited = limitGrow(bytes, limitPages(capBytes));
  if ('bytes' in limited) return { ...parsed, bytes: limited.bytes };
  return { ...capModuleMemory(bytes, capBytes), notResizable: `its module's memory.grow could not be bounded by a changeable limit (${limited.refused})` };
}

async function compile(image: PulledImage, capBytes: number | undefined, resizable: boolean): Promise<LoadedModule> {
  const t0 = performance.now();
  let bytes: Uint8Array;
  try {
    bytes = await readFile(image.path);
  } catch (e) {
    throw providerError('InvalidImage', `cannot read module of image ${image.image} at ${image.path}: ${(e as Error).message}`, { cause: e });
  }
  let capped;
  try {
    capped = bound(bytes, capBytes, resizable);
  } catch (e) {
    if (e instanceof MemoryCapError && e.kind === 'too-small') {
      throw providerError('InvalidArgument', `image ${image.image}: ${e.message}`, { reason: 'OOMKilled', cause: e });
    }
    throw providerError('InvalidImage', `image ${image.image} is not a valid WebAssembly module: ${(e as Error).message}`, { cause: e });
  }
  let module: WebAssembly.Module;
  try {
    module = await WebAssembly.compile(capped.bytes as Uint8Array<ArrayBuffer>);
  } catch (e) {
    throw providerError('InvalidImage', `image ${image.image} is not a valid WebAssembly module: ${(e as Error).message}`, { cause: e });
  }
  validate(module, capped.memories, image.image);
  const importedMemories = capped.memories.filter((m) => m.import !== undefined);
  const imports = WebAssembly.Module.imports(module);
  const acceptsSockets = imports.some((i) => i.module === 'wasi_snapshot_preview1' && i.name === 'sock_accept');
  const experimentalHttp = imports.some((i) => i.module === 'wasi_experimental_http');
  let preemptible: Promise<WebAssembly.Module> | undefined;
  return {
    module,
    preemptible: () => (preemptible ??= compilePreemptible(image, capBytes, resizable, module)),
    memories: capped.memories,
    importedMemories,
    capBytes,
    notResizable: capped.notResizable,
    compileMs: performance.now() - t0,
    acceptsSockets,
    experimentalHttp,
    startFunction: capped.startFunction === true,
  };
}

/**
 * `image`'s module compiled with preemption points, or `module` when the rewrite does not apply.
 * The file is read again rather than its bytes kept with every cache entry.
 */
async function compilePreemptible(
  image: PulledImage,
  capBytes: number | undefined,
  resizable: boolean,
  module: WebAssembly.Module,
): Promise<WebAssembly.Module> {
  try {
    // Bounded as `module` is (its memory limit changeable or not), then given preemption points.
    const pre = addPreemption(bound(await readFile(image.path), capBytes, resizable).bytes);
    return pre.preemptible ? await WebAssembly.compile(pre.bytes as Uint8Array<ArrayBuffer>) : module;
  } catch {
    return module;
  }
}

function validate(module: WebAssembly.Module, memories: readonly MemoryDecl[], image: string): void {
  const bad = (why: string) => providerError('InvalidImage', `image ${image} is not a WASI preview1 command module: ${why}`);
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

import { readFile } from 'node:fs/promises';
import { providerError, type PulledImage } from '@nodelet/plugin-api/v1';
import { capModuleMemory, checkMemoryFits, type CappedModule, type MemoryDecl } from './memory-cap.ts';
import { addPreemption } from './preemption.ts';
import { limitGrow, limitPages } from './grow-limit.ts';
import { compileCommandModule, ModuleRefused } from './module-check.ts';

export { EXPERIMENTAL_HTTP_FUNCTIONS, WASI_PREVIEW1_FUNCTIONS } from './module-check.ts';

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
  let compiled;
  try {
    compiled = await compileCommandModule(bytes, image.image, (b) => bound(b, capBytes, resizable));
  } catch (e) {
    throw e instanceof ModuleRefused ? providerError(e.code, e.message, { reason: e.reason, cause: e.cause }) : e;
  }
  const { module, capped } = compiled;
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

/**
 * `nodelet run`'s on-disk cache of compiled modules, so that a later run of the same
 * module skips compiling it. What is kept is V8's own serialization of a compiled Wasm
 * module (the code cache browsers keep for Wasm): its machine code for the functions
 * TurboFan compiled and its tiering state; functions not in it compile lazily, as usual.
 * Node has no public API for it, so V8's test functions `%SerializeWasmModule`,
 * `%DeserializeWasmModule`, `%WasmTierUpFunction` and `%IsTurboFanFunction` are compiled
 * once with `--allow-natives-syntax` set for that moment; where that fails the cache is off.
 *
 *   <dir>/<CRC-32 of the module, hex>-<its length>.wasm-code   one entry per module:
 *     "NDLWCODE" | u32 LE header length | header JSON | the module's bytes | V8's code
 *     header: { format, node, v8, arch, moduleBytes, codeBytes, codeCrc32 }
 *
 * Entries are keyed by the module's digest, a CRC-32 and length (zlib's, native: a
 * cryptographic hash would cost node:crypto's load, ~5 ms and 3 MiB, on every run);
 * an entry is used only when the module's bytes stored in it equal the module's, byte
 * for byte, so two modules of one digest never share code. It is used only when its
 * header names this Node, V8 and CPU architecture and its code's CRC-32 matches the
 * header's (a damaged file is not handed to V8, whose deserializer trusts its input);
 * V8 then checks its own version, flags and CPU features and refuses (undefined) what
 * another build or configuration wrote. Anything refused is compiled as if absent and
 * replaced after the run. Entries are written whole (a temporary file renamed) after a
 * run that ended by itself; one is stored only if it holds TurboFan code (V8 serializes
 * nothing else), so the module's `_start` is tiered up first. Least recently used
 * entries (file mtime, touched at each use) are removed beyond `maxBytes`. The directory
 * must be the user's own and writable by nobody else (its entries are machine code this
 * process runs): otherwise the cache is off.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import v8 from 'node:v8';
import { crc32 } from 'node:zlib';

/** Bound of the cache's entries together (bytes): an entry is its module's bytes (512 KiB and more) and their hot code. */
export const COMPILE_CACHE_MAX_BYTES = 128 * 1024 * 1024;

/** The entry format's magic; a change of layout changes it. */
const MAGIC = Buffer.from('NDLWCODE', 'latin1');
const FORMAT = 1;
const SUFFIX = '.wasm-code';

/** An entry's header. */
interface EntryHeader {
  readonly format: number;
  readonly node: string;
  readonly v8: string;
  readonly arch: string;
  /** Length of the module's bytes, which follow the header. */
  readonly moduleBytes: number;
  /** Length and CRC-32 of V8's serialized code, which follows them. */
  readonly codeBytes: number;
  readonly codeCrc32: number;
}

/** V8's test functions for Wasm module serialization. */
interface V8WasmCode {
  serialize(module: WebAssembly.Module): ArrayBuffer;
  deserialize(code: ArrayBuffer, wire: Uint8Array): WebAssembly.Module | undefined;
  tierUp(fn: unknown): void;
  isTurboFan(fn: unknown): boolean;
}

/** The functions of {@link V8WasmCode}, or undefined where V8 refuses natives syntax. */
function v8WasmCode(): V8WasmCode | undefined {
  try {
    v8.setFlagsFromString('--allow-natives-syntax');
    try {
      // Each is called only with arguments of the type it checks (a CHECK failure would
      // abort the process): a module, an ArrayBuffer and a Uint8Array, an exported Wasm function.
      const serialize = new Function('m', 'return %SerializeWasmModule(m);') as V8WasmCode['serialize'];
      const deserialize = new Function('c', 'w', 'return %DeserializeWasmModule(c, w);') as V8WasmCode['deserialize'];
      const tierUp = new Function('f', '%WasmTierUpFunction(f);') as V8WasmCode['tierUp'];
      const isTurboFan = new Function('f', 'return %IsTurboFanFunction(f);') as V8WasmCode['isTurboFan'];
      return { serialize, deserialize, tierUp, isTurboFan };
    } finally {
      v8.setFlagsFromString('--no-allow-natives-syntax');
    }
  } catch {
    return undefined;
  }
}

/** The cache's two operations. */
export interface CompileCache {
  /** The compiled module of the module `wire`, or undefined when there is no usable entry. */
  load(wire: Uint8Array<ArrayBuffer>): WebAssembly.Module | undefined;
  /**
   * Stores `module` (compiled from `wire`) after a run of `instance` that ended by
   * itself, unless {@link load} found its entry. Best effort: nothing is thrown; false
   * when nothing was stored.
   */
  store(wire: Uint8Array, module: WebAssembly.Module, instance: WebAssembly.Instance): boolean;
}

/** The file name of the entry of module `wire`: its digest, CRC-32 and length. */
export function entryName(wire: Uint8Array): string {
  return `${crc32(wire).toString(16).padStart(8, '0')}-${wire.length}${SUFFIX}`;
}

/** Options of {@link openCompileCache}. */
export interface CompileCacheOptions {
  /** The directory of the entries (made 0700 when missing; its parent must exist). */
  readonly dir: string;
  /** Default {@link COMPILE_CACHE_MAX_BYTES}. */
  readonly maxBytes?: number;
}

/** The cache at `opts.dir`, or undefined when it cannot be used (see the module comment). */
export function openCompileCache(opts: CompileCacheOptions): CompileCache | undefined {
  if (!ownPrivateDir(opts.dir)) return undefined;
  const code = v8WasmCode();
  if (!code) return undefined;
  return new DiskCompileCache(opts.dir, opts.maxBytes ?? COMPILE_CACHE_MAX_BYTES, code);
}

/**
 * Makes `dir` (0700) if missing, not its parent (bin/nodelet.mjs makes the cache's root with
 * its js-code directory); true when it is a directory (not a link) of this user that only
 * this user can write.
 */
function ownPrivateDir(dir: string): boolean {
  try {
    try {
      fs.mkdirSync(dir, { mode: 0o700 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return false;
    }
    const st = fs.lstatSync(dir);
    const uid = process.getuid?.();
    return st.isDirectory() && (uid === undefined || st.uid === uid) && (st.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

class DiskCompileCache implements CompileCache {
  /** Entries {@link load} used. */
  private readonly hits = new Set<string>();

  constructor(
    private readonly dir: string,
    private readonly maxBytes: number,
    private readonly code: V8WasmCode,
  ) {}

  load(wire: Uint8Array<ArrayBuffer>): WebAssembly.Module | undefined {
    const name = entryName(wire);
    const path = join(this.dir, name);
    let file: Buffer;
    try {
      file = fs.readFileSync(path);
    } catch {
      return undefined;
    }
    const codeBytes = entryCode(file, wire);
    if (!codeBytes) return undefined;
    let module: WebAssembly.Module | undefined;
    try {
      // A fresh ArrayBuffer holding exactly the code (the file's buffer may be shared or offset).
      module = this.code.deserialize(codeBytes.buffer.slice(codeBytes.byteOffset, codeBytes.byteOffset + codeBytes.length) as ArrayBuffer, wire);
    } catch {
      return undefined;
    }
    if (!(module instanceof WebAssembly.Module)) return undefined;
    this.hits.add(name);
    try {
      const now = new Date();
      fs.utimesSync(path, now, now); // recently used: evicted last
    } catch {
      // read-only cache: still usable
    }
    return module;
  }

  store(wire: Uint8Array, module: WebAssembly.Module, instance: WebAssembly.Instance): boolean {
    const name = entryName(wire);
    if (this.hits.has(name)) return false;
    const start = moduleDefinedExport(module, instance, '_start');
    if (!start) return false;
    const tmp = join(this.dir, `.${process.pid}.${Date.now()}.tmp`);
    try {
      // V8 serializes only TurboFan code and refuses (aborting the process) a module with none.
      this.code.tierUp(start);
      if (!this.code.isTurboFan(start)) return false;
      const serialized = new Uint8Array(this.code.serialize(module));
      const header: EntryHeader = {
        format: FORMAT,
        node: process.version,
        v8: process.versions.v8,
        arch: process.arch,
        moduleBytes: wire.length,
        codeBytes: serialized.length,
        codeCrc32: crc32(serialized),
      };
      const json = Buffer.from(JSON.stringify(header));
      const len = Buffer.alloc(4);
      len.writeUInt32LE(json.length);
      fs.writeFileSync(tmp, Buffer.concat([MAGIC, len, json, wire, serialized]), { mode: 0o600 });
      fs.renameSync(tmp, join(this.dir, name));
    } catch {
      fs.rmSync(tmp, { force: true });
      return false;
    }
    this.evict();
    return true;
  }

  /** Removes the least recently used entries (and stray temporary files) beyond the bound. */
  private evict(): void {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return;
    }
    const entries: Array<{ path: string; size: number; mtimeMs: number }> = [];
    for (const name of names) {
      const path = join(this.dir, name);
      try {
        const st = fs.lstatSync(path);
        if (!st.isFile()) continue;
        // A temporary file of a run that died before its rename (a minute is far beyond any write).
        if (name.endsWith('.tmp') && Date.now() - st.mtimeMs > 60_000) fs.rmSync(path, { force: true });
        else if (name.endsWith(SUFFIX)) entries.push({ path, size: st.size, mtimeMs: st.mtimeMs });
      } catch {
        // gone meanwhile
      }
    }
    entries.sort((a, b) => b.mtimeMs - a.mtimeMs);
    let total = 0;
    for (const e of entries) {
      total += e.size;
      if (total > this.maxBytes) fs.rmSync(e.path, { force: true });
    }
  }
}

/**
 * The serialized code of an entry file, when its header is this process's (format,
 * Node, V8, architecture), the module's bytes in it are `wire`, byte for byte, and its
 * code's CRC-32 is the header's.
 */
function entryCode(file: Buffer, wire: Uint8Array): Buffer | undefined {
  if (file.length < MAGIC.length + 4 || !file.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  const headerEnd = MAGIC.length + 4 + file.readUInt32LE(MAGIC.length);
  if (headerEnd > file.length) return undefined;
  let h: Partial<EntryHeader>;
  try {
    h = JSON.parse(file.subarray(MAGIC.length + 4, headerEnd).toString('utf8')) as Partial<EntryHeader>;
  } catch {
    return undefined;
  }
  if (h.format !== FORMAT || h.node !== process.version || h.v8 !== process.versions.v8 || h.arch !== process.arch) return undefined;
  if (h.moduleBytes !== wire.length || headerEnd + wire.length + (h.codeBytes ?? -1) !== file.length) return undefined;
  if (!file.subarray(headerEnd, headerEnd + wire.length).equals(wire)) return undefined;
  const codeBytes = file.subarray(headerEnd + wire.length);
  return crc32(codeBytes) === h.codeCrc32 ? codeBytes : undefined;
}

/**
 * The export `name` of `instance` when it is a function the module defines (not an
 * import it passes on): what `%WasmTierUpFunction` accepts. V8 names an exported Wasm
 * function by its function index, and the module's imported functions come first.
 */
function moduleDefinedExport(module: WebAssembly.Module, instance: WebAssembly.Instance, name: string): unknown {
  const fn = instance.exports[name];
  if (typeof fn !== 'function' || !/^\d+$/.test(fn.name)) return undefined;
  const imported = WebAssembly.Module.imports(module).filter((i) => i.kind === 'function').length;
  return Number(fn.name) >= imported ? fn : undefined;
}

/**
 * Caps a module's linear memory by rewriting the limits in its binary.
 *
 * Wasm memory is not subject to worker `resourceLimits` (those cap the JS heap),
 * and node:wasi has no knob for it. But a memory's declared maximum is enforced
 * by the engine: `memory.grow` past it returns -1, so `malloc` returns NULL. So
 * for `limits.memoryBytes` we rewrite every memory's limits (defined in the
 * memory section, id 5, or imported in the import section, id 2) to
 * `max = min(declared max, floor(limit / 64 KiB))` before compiling. A module
 * whose *minimum* is already above the cap cannot run at all.
 *
 * The parser only walks section headers and the import/memory sections, so it
 * is cheap; everything else is copied byte for byte.
 */

/** Bytes per Wasm page. */
export const WASM_PAGE = 65536;

/** A linear memory of a module, as declared. */
export interface MemoryDecl {
  /** Set for an imported memory: where the instance expects it. */
  readonly import?: { readonly module: string; readonly name: string };
  /** Pages. */
  readonly min: number;
  readonly max?: number;
  readonly shared: boolean;
}

/** The result of {@link capModuleMemory}. */
export interface CappedModule {
  /** The (possibly rewritten) module binary. */
  readonly bytes: Uint8Array;
  /** The memories after rewriting. */
  readonly memories: readonly MemoryDecl[];
  /** The module has a start section (a function run inside instantiation, before `_start`). */
  readonly startFunction?: boolean;
}

/** Thrown when a module cannot be parsed or cannot fit the cap. */
export class MemoryCapError extends Error {
  /** `invalid` (malformed binary) or `too-small` (the minimum exceeds the cap). */
  constructor(
    readonly kind: 'invalid' | 'too-small',
    message: string,
  ) {
    super(message);
    this.name = 'MemoryCapError';
  }
}

/** Reads a module binary; `fail` makes the error thrown for a malformed one (MemoryCapError by default). */
export class Reader {
  constructor(
    readonly b: Uint8Array,
    public pos = 0,
    readonly end = b.length,
    readonly fail: (message: string) => Error = (m) => new MemoryCapError('invalid', m),
  ) {}
  byte(): number {
    if (this.pos >= this.end) throw this.fail('unexpected end of module');
    return this.b[this.pos++]!;
  }
  u32(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      const x = this.byte();
      result += (x & 0x7f) * 2 ** shift;
      if ((x & 0x80) === 0) break;
      shift += 7;
      if (shift > 63) throw this.fail('LEB128 integer too long');
    }
    return result;
  }
  name(): string {
    const n = this.u32();
    const s = new TextDecoder().decode(this.b.subarray(this.pos, this.pos + n));
    this.pos += n;
    return s;
  }
}

/** A section of a module binary: its id, where it starts (its id byte), where its content starts and ends. */
export interface Section {
  readonly id: number;
  readonly start: number;
  readonly body: number;
  readonly end: number;
}

/** The sections of `bytes` after the 8-byte preamble, in order; `fail` makes the error for a malformed binary. */
export function sectionsOf(bytes: Uint8Array, fail: (message: string) => Error = (m) => new MemoryCapError('invalid', m)): Section[] {
  const r = new Reader(bytes, 8, bytes.length, fail);
  const out: Section[] = [];
  while (r.pos < bytes.length) {
    const start = r.pos;
    const id = r.byte();
    const size = r.u32();
    const body = r.pos;
    const end = body + size;
    if (end > bytes.length) throw fail(`section ${id} runs past the end of the module`);
    out.push({ id, start, body, end });
    r.pos = end;
  }
  return out;
}

/** `n` as unsigned LEB128. */
export function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let x = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) x |= 0x80;
    out.push(x);
  } while (n > 0);
  return out;
}

interface Limits {
  min: number;
  max?: number;
  shared: boolean;
}

function readLimits(r: Reader): Limits {
  const flags = r.byte();
  if (flags & 0x04) throw new MemoryCapError('invalid', 'memory64 is not supported');
  if (flags & ~0x03) throw new MemoryCapError('invalid', `unknown memory limits flags 0x${flags.toString(16)}`);
  const min = r.u32();
  const max = flags & 0x01 ? r.u32() : undefined;
  return { min, max, shared: (flags & 0x02) !== 0 };
}

function capLimits(l: Limits, capPages: number | undefined, what: string): Limits {
  if (capPages === undefined) return l;
  if (l.min > capPages) {
    throw new MemoryCapError(
      'too-small',
      `${what} needs at least ${l.min} pages (${l.min * 64} KiB), ` + `more than the memory limit of ${capPages} pages (${capPages * 64} KiB)`,
    );
  }
  return { ...l, max: Math.min(l.max ?? capPages, capPages) };
}

/**
 * Throws {@link MemoryCapError} (`too-small`) when a memory's minimum is above `capBytes`, with
 * the message {@link capModuleMemory} gives: for a module whose maximum is not capped because its
 * limit is enforced otherwise (grow-limit.ts).
 */
export function checkMemoryFits(memories: readonly MemoryDecl[], capBytes: number | undefined): void {
  const capPages = capBytes === undefined ? undefined : Math.floor(capBytes / WASM_PAGE);
  for (const m of memories) capLimits(m, capPages, m.import ? `imported memory ${m.import.module}.${m.import.name}` : "the module's memory");
}

function writeLimits(l: Limits): number[] {
  const flags = (l.max !== undefined ? 1 : 0) | (l.shared ? 2 : 0);
  return [flags, ...leb(l.min), ...(l.max !== undefined ? leb(l.max) : [])];
}

/** Rewrites the import section; returns its new content and the imported memories. */
function importSection(r: Reader, capPages: number | undefined, mems: MemoryDecl[]): number[] {
  const out: number[] = [];
  const count = r.u32();
  out.push(...leb(count));
  for (let i = 0; i < count; i++) {
    const start = r.pos;
    const module = r.name();
    const name = r.name();
    const kind = r.byte();
    if (kind !== 0x02) {
      skipImportDesc(r, kind);
      out.push(...r.b.subarray(start, r.pos));
      continue;
    }
    const headEnd = r.pos;
    const l = capLimits(readLimits(r), capPages, `imported memory ${module}.${name}`);
    mems.push({ import: { module, name }, ...l });
    out.push(...r.b.subarray(start, headEnd), ...writeLimits(l));
  }
  return out;
}

/** Skips an import's description of kind `kind`. */
export function skipImportDesc(r: Reader, kind: number): void {
  switch (kind) {
    case 0x00:
      r.u32();
      return; // func: type index
    case 0x01:
      r.byte();
      readTableLimits(r);
      return; // table: reftype + limits
    case 0x03:
      r.byte();
      r.byte();
      return; // global: valtype + mutability
    case 0x04:
      r.byte();
      r.u32();
      return; // tag: attribute + type index
    default:
      throw new MemoryCapError('invalid', `unknown import kind 0x${kind.toString(16)}`);
  }
}

function readTableLimits(r: Reader): void {
  const flags = r.byte();
  r.u32();
  if (flags & 0x01) r.u32();
}

/**
 * Parses `bytes` and, when `capBytes` is given, caps every memory's maximum to
 * `floor(capBytes / 64 KiB)` pages. Returns the binary unchanged when there is
 * nothing to rewrite. Throws {@link MemoryCapError}.
 */
export function capModuleMemory(bytes: Uint8Array, capBytes?: number): CappedModule {
  const capPages = capBytes === undefined ? undefined : Math.floor(capBytes / WASM_PAGE);
  if (bytes.length < 8 || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) {
    throw new MemoryCapError('invalid', 'not a WebAssembly module (bad magic number)');
  }
  if (bytes[4] !== 1 || bytes[5] !== 0 || bytes[6] !== 0 || bytes[7] !== 0) {
    throw new MemoryCapError('invalid', 'unsupported WebAssembly binary version (a component?)');
  }
  const chunks: Uint8Array[] = [bytes.subarray(0, 8)];
  const memories: MemoryDecl[] = [];
  let changed = false;
  let startFunction = false;
  for (const { id, start, body, end } of sectionsOf(bytes)) {
    if (id === 8) startFunction = true;
    if (id === 2 || id === 5) {
      const sr = new Reader(bytes, body, end);
      const content = id === 2 ? importSection(sr, capPages, memories) : memorySection(sr, capPages, memories);
      if (sr.pos !== end) throw new MemoryCapError('invalid', `section ${id} has trailing bytes`);
      if (capPages !== undefined) {
        chunks.push(Uint8Array.from([id, ...leb(content.length), ...content]));
        changed = true;
      } else {
        chunks.push(bytes.subarray(start, end));
      }
    } else {
      chunks.push(bytes.subarray(start, end));
    }
  }
  return { bytes: changed ? concat(chunks) : bytes, memories, startFunction };
}

function memorySection(r: Reader, capPages: number | undefined, mems: MemoryDecl[]): number[] {
  const count = r.u32();
  const out = [...leb(count)];
  for (let i = 0; i < count; i++) {
    const l = capLimits(readLimits(r), capPages, "the module's memory");
    mems.push(l);
    out.push(...writeLimits(l));
  }
  return out;
}

/** The chunks one after the other. */
export function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.length;
  }
  return out;
}

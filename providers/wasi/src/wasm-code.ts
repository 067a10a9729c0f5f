/**
 * Decoding and rewriting of a module's function bodies, instruction by
 * instruction (MVP, sign extension, bulk memory, reference types, SIMD,
 * threads, tail calls, exceptions), for the rewrites that add code to a module
 * (stack-tracking.ts, preemption.ts). Hand-written: the npm Wasm toolkits
 * (binaryen.js, wabt.js) are several MB of Wasm themselves and re-encode the
 * whole module; these rewrites copy it and touch only the instructions they edit.
 */
import { Reader, skipImportDesc, type Section } from './memory-cap.ts';
import { skipConstExpr } from './global-exports.ts';

export function sleb32(r: Reader): number {
  let result = 0;
  let shift = 0;
  let b: number;
  do {
    b = r.byte();
    result |= (b & 0x7f) << shift;
    shift += 7;
  } while (b & 0x80);
  return shift < 32 && b & 0x40 ? result | (-1 << shift) : result;
}
/** Single-byte instructions without immediates. */
const NO_IMMEDIATE = (op: number) =>
  op === 0x00 ||
  op === 0x01 ||
  op === 0x05 ||
  op === 0x0a ||
  op === 0x0b ||
  op === 0x0f ||
  op === 0x19 ||
  op === 0x1a ||
  op === 0x1b ||
  (op >= 0x45 && op <= 0xc4) ||
  op === 0xd1 ||
  op === 0xd3 ||
  op === 0xd4;
export function skipLeb(r: Reader): void {
  while (r.byte() & 0x80);
}
function memarg(r: Reader): void {
  const align = r.u32();
  if (align & 0x40) r.u32(); // memory index (multi-memory)
  r.u32();
}
function blockType(r: Reader): void {
  const b = r.b[r.pos]!;
  if (b === 0x40 || (b >= 0x6f && b <= 0x7f) || b === 0x63 || b === 0x64) {
    r.pos++;
    if (b === 0x63 || b === 0x64) skipLeb(r);
  } else skipLeb(r); // a type index (s33)
}

/** What {@link rewriteBody} does with one instruction. */
export interface InstructionEdit {
  /** Bytes that take the instruction's place. */
  readonly replace?: readonly number[];
  /** Bytes put right after the instruction. */
  readonly after?: readonly number[];
}

/**
 * Decides the edit of one instruction: its opcode and, for the instructions
 * with one index immediate (`global.set`, `call`, `local.get`, …), that index.
 */
export type EditInstruction = (op: number, index: number | undefined) => InstructionEdit | undefined;

/**
 * Copies one function body (the reader at its local declarations, `end` where
 * it ends), putting `prologue` after the local declarations and applying
 * `edit` to every instruction. Returns the new body (unedited stretches are
 * copied as slices, not byte by byte). Throws `fail(...)` on an
 * instruction this decoder does not know.
 */
export function rewriteBody(r: Reader, end: number, edit: EditInstruction, fail: (message: string) => Error, prologue: readonly number[] = []): Uint8Array {
  const parts: ArrayLike<number>[] = [];
  let copied = r.pos;
  const flush = (upTo: number) => {
    if (upTo > copied) parts.push(r.b.subarray(copied, upTo));
    copied = upTo;
  };
  for (let n = r.u32(), i = 0; i < n; i++) {
    r.u32();
    const t = r.byte();
    if (t === 0x63 || t === 0x64) skipLeb(r);
  }
  flush(r.pos);
  parts.push(prologue);
  while (r.pos < end) {
    const at = r.pos;
    const op = r.byte();
    let index: number | undefined;
    switch (op) {
      case 0x02:
      case 0x03:
      case 0x04:
      case 0x06:
        blockType(r);
        break;
      case 0x1f: {
        blockType(r);
        for (let n = r.u32(), i = 0; i < n; i++) {
          const kind = r.byte();
          if (kind === 0 || kind === 1) r.u32();
          r.u32();
        }
        break;
      }
      case 0x07:
      case 0x08:
      case 0x09:
      case 0x0c:
      case 0x0d:
      case 0x10:
      case 0x12:
      case 0x18:
      case 0x20:
      case 0x21:
      case 0x22:
      case 0x23:
      case 0x25:
      case 0x26:
      case 0xd2:
      case 0x14: // call_ref
      case 0x15: // return_call_ref
      case 0xd5: // br_on_null
      case 0xd6: // br_on_non_null
      case 0x24:
        index = r.u32();
        break;
      case 0x0e:
        for (let n = r.u32(), i = 0; i <= n; i++) r.u32();
        break;
      case 0x11:
      case 0x13:
        r.u32();
        r.u32();
        break;
      case 0x1c:
        for (let n = r.u32(), i = 0; i < n; i++) {
          const t = r.byte();
          if (t === 0x63 || t === 0x64) skipLeb(r);
        }
        break;
      case 0x3f:
      case 0x40:
        r.u32();
        break;
      case 0x41:
      case 0x42:
        skipLeb(r);
        break;
      case 0x43:
        r.pos += 4;
        break;
      case 0x44:
        r.pos += 8;
        break;
      case 0xd0:
        blockType(r);
        break;
      case 0xfc: {
        const sub = r.u32();
        if (sub <= 7) break;
        if (sub === 8 || sub === 10 || sub === 12 || sub === 14) {
          r.u32();
          r.u32();
        } else if (sub <= 17) r.u32();
        else throw fail(`unknown instruction 0xfc ${sub}`);
        break;
      }
      case 0xfd: {
        const sub = r.u32();
        if (sub <= 11 || sub === 92 || sub === 93) memarg(r);
        else if (sub === 12 || sub === 13) r.pos += 16;
        else if (sub >= 21 && sub <= 34) r.pos += 1;
        else if (sub >= 84 && sub <= 91) {
          memarg(r);
          r.pos += 1;
        }
        break;
      }
      case 0xfe: {
        const sub = r.u32();
        if (sub === 3) r.pos += 1;
        else memarg(r);
        break;
      }
      default:
        if (op >= 0x28 && op <= 0x3e) memarg(r);
        else if (!NO_IMMEDIATE(op)) throw fail(`unknown instruction 0x${op.toString(16)}`);
    }
    const e = edit(op, index);
    if (e?.replace) {
      flush(at);
      parts.push(e.replace);
      copied = r.pos;
    }
    if (e?.after) {
      flush(r.pos);
      parts.push(e.after);
    }
  }
  if (r.pos !== end) throw fail('a function body ends inside an instruction');
  flush(end);
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** `n` as signed LEB128 (32-bit). */
export function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && !(b & 0x40)) || (n === -1 && b & 0x40)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

/** How many functions, tables, memories and globals a module imports and defines, and its function types. */
export interface IndexSpaces {
  /** Function types in the type section (only plain ones: see {@link indexSpaces}). */
  readonly types: number;
  readonly imported: { readonly funcs: number; readonly tables: number; readonly memories: number; readonly globals: number };
  readonly defined: { readonly funcs: number; readonly tables: number; readonly memories: number; readonly globals: number };
}

/**
 * Counts `bytes`' index spaces from its `sections`, for a rewrite that appends a type, function,
 * table or global after the module's own (its index is then the count). Throws `fail(...)` on a
 * type section with anything but plain function types: rec groups and sub types (GC) make the
 * section's count differ from the number of types.
 */
export function indexSpaces(bytes: Uint8Array, sections: readonly Section[], fail: (message: string) => Error): IndexSpaces {
  let types = 0;
  const imported = { funcs: 0, tables: 0, memories: 0, globals: 0 };
  const defined = { funcs: 0, tables: 0, memories: 0, globals: 0 };
  for (const { id, body, end } of sections) {
    const r = new Reader(bytes, body, end, fail);
    if (id === 1) {
      types = r.u32();
      for (let i = 0; i < types; i++) {
        const form = r.byte();
        if (form !== 0x60) throw fail(`type ${i} is not a plain function type (0x${form.toString(16)})`);
        for (let k = 0; k < 2; k++) {
          for (let m = r.u32(), j = 0; j < m; j++) {
            const t = r.byte();
            if (t === 0x63 || t === 0x64) skipLeb(r);
          }
        }
      }
    } else if (id === 2) {
      for (let n = r.u32(), i = 0; i < n; i++) {
        r.name();
        r.name();
        const kind = r.byte();
        if (kind === 0) imported.funcs++;
        else if (kind === 1) imported.tables++;
        else if (kind === 3) imported.globals++;
        if (kind !== 2) {
          skipImportDesc(r, kind);
          continue;
        }
        imported.memories++;
        const flags = r.byte();
        r.u32();
        if (flags & 0x01) r.u32();
      }
    } else if (id === 3) defined.funcs = r.u32();
    else if (id === 4) defined.tables = r.u32();
    else if (id === 5) defined.memories = r.u32();
    else if (id === 6) {
      defined.globals = r.u32();
      for (let i = 0; i < defined.globals; i++) {
        const t = r.byte();
        if (t === 0x63 || t === 0x64) skipLeb(r);
        r.byte();
        skipConstExpr(r);
      }
    }
  }
  return { types, imported, defined };
}

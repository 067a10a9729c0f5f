/**
 * Exports every mutable global a module defines, as `nodelet:global:<index>`, by appending to
 * its export section (or adding one after the global section). A component served with an
 * instance per request (worker/http/instance-pool.mjs) is put back in its start state after each
 * request: its memory is reachable from JavaScript, its globals (the stack pointer, a language
 * runtime's heap pointers) only once exported. Nothing else in the module changes.
 *
 * Globals of a type JavaScript cannot read back (v128, references) make the rewrite fail:
 * such a module cannot be reset, and is served with one instance instead.
 */
import { concat, leb, Reader, sectionsOf, skipImportDesc } from './memory-cap.ts';

/** The name a mutable global is exported under. */
export const GLOBAL_EXPORT_PREFIX = 'nodelet:global:';

/** Thrown when a module's globals cannot be exported. */
export class GlobalExportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GlobalExportError';
  }
}

const NUMERIC = new Set([0x7f, 0x7e, 0x7d, 0x7c]);

/** Skips a constant expression up to and including its `end`. */
export function skipConstExpr(r: Reader): void {
  for (;;) {
    const op = r.byte();
    switch (op) {
      case 0x0b:
        return;
      case 0x41: // i32.const
      case 0x42: // i64.const
        while (r.byte() & 0x80);
        break;
      case 0x43:
        r.pos += 4;
        break;
      case 0x44:
        r.pos += 8;
        break;
      case 0x23: // global.get
      case 0xd2: // ref.func
        r.u32();
        break;
      case 0xd0: // ref.null
        r.byte();
        break;
      case 0x6a: // extended constants: i32/i64 add, sub, mul
      case 0x6b:
      case 0x6c:
      case 0x7c:
      case 0x7d:
      case 0x7e:
        break;
      default:
        throw new GlobalExportError(`unsupported instruction 0x${op.toString(16)} in a global's initializer`);
    }
  }
}

/**
 * `bytes` with its mutable globals exported, and their indices. Returns the binary unchanged
 * when it defines none. Throws {@link GlobalExportError} (or MemoryCapError for a malformed module).
 */
export function exportMutableGlobals(bytes: Uint8Array): { bytes: Uint8Array; globals: number[] } {
  const fail = (m: string) => new GlobalExportError(m);
  let importedGlobals = 0;
  const mutable: number[] = [];
  const sections = sectionsOf(bytes, fail);
  for (const { id, body, end } of sections) {
    const sr = new Reader(bytes, body, end, fail);
    if (id === 2) {
      for (let n = sr.u32(), i = 0; i < n; i++) {
        sr.name();
        sr.name();
        const kind = sr.byte();
        if (kind === 0x03) importedGlobals++;
        skipImportDesc(sr, kind);
      }
    } else if (id === 6) {
      for (let n = sr.u32(), i = 0; i < n; i++) {
        const type = sr.byte();
        if (type === 0x63 || type === 0x64) sr.u32(); // a typed reference's heap type
        const isMutable = sr.byte() === 1;
        if (isMutable && !NUMERIC.has(type)) throw fail(`mutable global ${importedGlobals + i} has a type JavaScript cannot read (0x${type.toString(16)})`);
        skipConstExpr(sr);
        if (isMutable) mutable.push(importedGlobals + i);
      }
    }
  }
  if (mutable.length === 0) return { bytes, globals: [] };
  const entries = mutable.flatMap((g) => {
    const name = new TextEncoder().encode(`${GLOBAL_EXPORT_PREFIX}${g}`);
    return [...leb(name.length), ...name, 0x03, ...leb(g)];
  });
  const chunks: Uint8Array[] = [bytes.subarray(0, 8)];
  const exportSection = sections.find((s) => s.id === 7);
  const after = exportSection ? undefined : [...sections].reverse().find((s) => s.id === 6);
  for (const s of sections) {
    if (s === exportSection) {
      const sr = new Reader(bytes, s.body, s.end, fail);
      const count = sr.u32();
      const content = [...leb(count + mutable.length), ...bytes.subarray(sr.pos, s.end), ...entries];
      chunks.push(Uint8Array.from([7, ...leb(content.length), ...content]));
      continue;
    }
    chunks.push(bytes.subarray(s.start, s.end));
    if (s === after) {
      const content = [...leb(mutable.length), ...entries];
      chunks.push(Uint8Array.from([7, ...leb(content.length), ...content]));
    }
  }
  return { bytes: concat(chunks), globals: mutable };
}

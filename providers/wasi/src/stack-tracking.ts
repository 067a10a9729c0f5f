/**
 * Makes a module record how deep its stack went, so resetting an instance after a request
 * (worker/http/instance-pool.mjs) copies back only the part of the stack the request used
 * instead of the whole stack region (1 MiB for Rust: ~50 µs of the ~65 µs a request cost).
 *
 * LLVM-built modules keep their stack pointer in their first mutable i32 global and, linked
 * stack-first (Rust's default on wasm32), put the stack below every data segment: the region
 * [0, initial stack pointer) holds nothing but the stack. Every `global.set` of that global is
 * replaced by a call to an added function that sets it and lowers an added global,
 * exported as `nodelet:stack-low`, when the new value is below it. After a request,
 * [0, stack-low) is untouched since the start state, and only [stack-low, end) is restored.
 *
 * The code section is decoded instruction by instruction (wasm-code.ts). A module this decoder
 * does not understand, or one not laid out stack-first, is left as it is ({@link StackTracking} says why)
 * and is reset in full.
 */
import { skipConstExpr } from './global-exports.ts';
import { concat, leb, Reader, sectionsOf, skipImportDesc } from './memory-cap.ts';
import { rewriteBody, skipLeb, sleb, sleb32 } from './wasm-code.ts';

/** The export holding the lowest stack pointer since it was last reset. */
export const STACK_LOW_EXPORT = 'nodelet:stack-low';

/** The outcome of {@link trackStack}. */
export type StackTracking =
  { readonly bytes: Uint8Array; readonly stackTop: number; readonly stackGlobal: number } | { readonly bytes: Uint8Array; readonly untracked: string };

class Unsupported extends Error {}
const fail = (m: string) => new Unsupported(m);

/** Adds stack tracking to `bytes` (see the file's comment); never throws. */
export function trackStack(bytes: Uint8Array): StackTracking {
  try {
    return rewrite(bytes);
  } catch (e) {
    return { bytes, untracked: (e as Error).message };
  }
}

function rewrite(bytes: Uint8Array): StackTracking {
  const sections = sectionsOf(bytes, fail);
  let importedFuncs = 0;
  let importedGlobals = 0;
  let definedFuncs = 0;
  let types = 0;
  let definedGlobals = 0;
  let sp: { index: number; top: number } | undefined;
  let lowestData = Infinity;
  for (const { id, body, end } of sections) {
    const sr = new Reader(bytes, body, end, fail);
    if (id === 1) types = sr.u32();
    else if (id === 2) {
      for (let n = sr.u32(), i = 0; i < n; i++) {
        sr.name();
        sr.name();
        const kind = sr.byte();
        if (kind === 0) importedFuncs++;
        if (kind === 3) importedGlobals++;
        skipImportDesc(sr, kind);
      }
    } else if (id === 3) definedFuncs = sr.u32();
    else if (id === 6) {
      definedGlobals = sr.u32();
      for (let i = 0; i < definedGlobals; i++) {
        const type = sr.byte();
        if (type === 0x63 || type === 0x64) skipLeb(sr);
        const mutable = sr.byte() === 1;
        const initAt = sr.pos;
        if (!sp && mutable && type === 0x7f && bytes[initAt] === 0x41) {
          sr.byte();
          sp = { index: importedGlobals + i, top: sleb32(sr) };
          if (sr.byte() !== 0x0b) throw fail('the stack pointer is not initialized with a constant');
        } else skipConstExpr(sr);
      }
    } else if (id === 11) {
      for (let n = sr.u32(), i = 0; i < n; i++) {
        const flags = sr.u32();
        if (flags === 1) {
          const size = sr.u32();
          sr.pos += size;
          continue;
        }
        if (flags === 2) sr.u32();
        if (flags !== 0 && flags !== 2) throw fail(`data segment flags ${flags}`);
        if (sr.byte() !== 0x41) throw fail('a data segment at a computed offset');
        lowestData = Math.min(lowestData, sleb32(sr) >>> 0);
        if (sr.byte() !== 0x0b) throw fail('a data segment at a computed offset');
        const size = sr.u32();
        sr.pos += size;
      }
    }
  }
  if (!sp) throw fail('no stack pointer (a mutable i32 global with a constant start value)');
  if (sp.top <= 0 || sp.top > lowestData) throw fail(`not linked stack-first (stack top ${sp.top}, data from ${lowestData})`);
  if (!sections.some((s) => s.id === 1) || !sections.some((s) => s.id === 3) || !sections.some((s) => s.id === 10) || !sections.some((s) => s.id === 6)) {
    throw fail('missing a type, function, global or code section');
  }
  const setter = importedFuncs + definedFuncs;
  const low = importedGlobals + definedGlobals;
  const spLeb = leb(sp.index);
  const lowLeb = leb(low);
  // (func (param i32) local.get 0 global.set sp  local.get 0 global.get low i32.lt_u if local.get 0 global.set low end)
  const setterBody = [0x00, 0x20, 0x00, 0x24, ...spLeb, 0x20, 0x00, 0x23, ...lowLeb, 0x49, 0x04, 0x40, 0x20, 0x00, 0x24, ...lowLeb, 0x0b, 0x0b];
  const section = (id: number, content: number[]) => Uint8Array.from([id, ...leb(content.length), ...content]);
  const withCount = (s: { body: number; end: number }, add: number, extra: number[]) => {
    const sr = new Reader(bytes, s.body, s.end, fail);
    const n = sr.u32();
    return [...leb(n + add), ...bytes.subarray(sr.pos, s.end), ...extra];
  };
  const chunks: Uint8Array[] = [bytes.subarray(0, 8)];
  const lowExport = [...leb(STACK_LOW_EXPORT.length), ...new TextEncoder().encode(STACK_LOW_EXPORT), 0x03, ...lowLeb];
  const hasExports = sections.some((s) => s.id === 7);
  for (const s of sections) {
    switch (s.id) {
      case 1:
        chunks.push(section(1, withCount(s, 1, [0x60, 1, 0x7f, 0])));
        break;
      case 3:
        chunks.push(section(3, withCount(s, 1, leb(types))));
        break;
      case 6:
        chunks.push(section(6, withCount(s, 1, [0x7f, 1, 0x41, ...sleb(sp.top), 0x0b])));
        if (!hasExports) chunks.push(section(7, [1, ...lowExport]));
        break;
      case 7:
        chunks.push(section(7, withCount(s, 1, lowExport)));
        break;
      case 10: {
        const sr = new Reader(bytes, s.body, s.end, fail);
        const n = sr.u32();
        const bodies: ArrayLike<number>[] = [];
        for (let i = 0; i < n; i++) {
          const size = sr.u32();
          const end = sr.pos + size;
          bodies.push(rewriteBody(sr, end, (op, index) => (op === 0x24 && index === sp.index ? { replace: [0x10, ...leb(setter)] } : undefined), fail));
          sr.pos = end;
        }
        bodies.push(setterBody);
        const content = concat([Uint8Array.from(leb(n + 1)), ...bodies.flatMap((b) => [Uint8Array.from(leb(b.length)), Uint8Array.from(b)])]);
        chunks.push(Uint8Array.from([10, ...leb(content.length)]), content);
        break;
      }
      default:
        chunks.push(bytes.subarray(s.start, s.end));
    }
  }
  return { bytes: concat(chunks), stackTop: sp.top, stackGlobal: sp.index };
}

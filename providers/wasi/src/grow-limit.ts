/**
 * Bounds a module's `memory.grow` by a limit that can change while it runs: the in-place
 * resize of `limits.memory` (`resizeContainer`, wasi-provider.ts).
 *
 * A memory's declared maximum is fixed once its instance exists, so a maximum capped to the
 * limit (memory-cap.ts) could never be raised without a restart. Instead, every
 * `memory.grow 0` of the code is replaced by a call to an appended function that grows the
 * memory only while it stays within an appended mutable i32 global, exported as
 * {@link MEMORY_LIMIT_EXPORT} and holding the limit in pages:
 *
 *   (func $grow (param $delta i32) (result i32)
 *     memory.size  i64.extend_i32_u  local.get $delta  i64.extend_i32_u  i64.add
 *     global.get $limit  i64.extend_i32_u  i64.gt_u
 *     if (result i32)  i32.const -1  else  local.get $delta  memory.grow  end)
 *
 * Past the limit `memory.grow` answers -1, exactly as at a declared maximum: `malloc` returns
 * NULL, and an allocator that aborts then traps near the limit (an OOM kill, wasi-container.ts).
 * The worker sets the global when the main thread asks (worker/memory-limit.mjs). The memory's
 * own declared maximum stays: a limit above it cannot be used. The global starts at the limit
 * the container starts with, so a start function (run inside instantiation) is bounded too.
 *
 * A module the decoder does not understand (wasm-code.ts), or with types this does not
 * count (GC rec groups), is refused ({@link GrowLimit} says why): it is then capped as before
 * and cannot be resized in place.
 */
import { indexSpaces, rewriteBody, sleb } from './wasm-code.ts';
import { concat, leb, MemoryCapError, Reader, sectionsOf, WASM_PAGE } from './memory-cap.ts';
import { MEMORY_LIMIT_EXPORT, NO_LIMIT_PAGES } from './worker/memory-limit.mjs';

export { MEMORY_LIMIT_EXPORT, NO_LIMIT_PAGES };

/** A module this rewrite does not apply to (see the file's comment). */
class Refused extends Error {}
const codeFail = (m: string): Error => new Refused(m);

/** The outcome of {@link limitGrow}: the rewritten module, or why it was left as it is. */
export type GrowLimit = { readonly bytes: Uint8Array } | { readonly refused: string };

/** The limit global's value for a memory limit of `bytes` (none: {@link NO_LIMIT_PAGES}). */
export function limitPages(bytes: number | undefined): number {
  return bytes === undefined || !Number.isFinite(bytes) ? NO_LIMIT_PAGES : Math.min(NO_LIMIT_PAGES, Math.max(0, Math.floor(bytes / WASM_PAGE)));
}

/** The order sections must appear in (custom sections, id 0, may be anywhere). */
const ORDER = [1, 2, 3, 4, 5, 13, 6, 7, 8, 9, 12, 10, 11];
const rank = (id: number) => ORDER.indexOf(id);

/** Rewrites `bytes` (see the file's comment) with the limit global starting at `pages`; never throws. */
export function limitGrow(bytes: Uint8Array, pages: number): GrowLimit {
  try {
    return { bytes: rewrite(bytes, pages) };
  } catch (e) {
    if (e instanceof Refused || e instanceof MemoryCapError) return { refused: e.message };
    throw e;
  }
}

function rewrite(bytes: Uint8Array, pages: number): Uint8Array {
  const sections = sectionsOf(bytes, codeFail);
  const { types, imported, defined } = indexSpaces(bytes, sections, codeFail);
  const [importedFuncs, importedGlobals, importedMemories] = [imported.funcs, imported.globals, imported.memories];
  const [definedFuncs, definedGlobals, definedMemories] = [defined.funcs, defined.globals, defined.memories];
  if (importedMemories + definedMemories !== 1) throw codeFail(`the module has ${importedMemories + definedMemories} memories, not one`);
  if (!sections.some((s) => s.id === 3) || !sections.some((s) => s.id === 10)) throw codeFail('the module has no code');
  const grow = importedFuncs + definedFuncs;
  const limit = importedGlobals + definedGlobals;
  const limitLeb = leb(limit);
  // (func (param i32) (result i32)), see the file's comment.
  const growBody = [
    0x00,
    ...[0x3f, 0x00, 0xad, 0x20, 0x00, 0xad, 0x7c],
    ...[0x23, ...limitLeb, 0xad, 0x56],
    ...[0x04, 0x7f, 0x41, 0x7f, 0x05, 0x20, 0x00, 0x40, 0x00, 0x0b, 0x0b],
  ];
  const globalEntry = [0x7f, 0x01, 0x41, ...sleb(pages), 0x0b];
  const name = new TextEncoder().encode(MEMORY_LIMIT_EXPORT);
  const exportEntry = [...leb(name.length), ...name, 0x03, ...limitLeb];
  const section = (id: number, content: readonly number[]) => Uint8Array.from([id, ...leb(content.length), ...content]);
  const withCount = (s: { body: number; end: number }, add: number, extra: readonly number[]) => {
    const r = new Reader(bytes, s.body, s.end, codeFail);
    const n = r.u32();
    return [...leb(n + add), ...bytes.subarray(r.pos, s.end), ...extra];
  };
  const chunks: Uint8Array[] = [bytes.subarray(0, 8)];
  // Sections this adds when the module has none: the type section (first), the global and export sections.
  const missing = new Map<number, number[]>();
  if (!sections.some((s) => s.id === 1)) missing.set(1, [1, 0x60, 1, 0x7f, 1, 0x7f]);
  if (!sections.some((s) => s.id === 6)) missing.set(6, [1, ...globalEntry]);
  if (!sections.some((s) => s.id === 7)) missing.set(7, [1, ...exportEntry]);
  const flushMissing = (before: number) => {
    for (const [id, content] of missing) {
      if (rank(id) < before) {
        chunks.push(section(id, content));
        missing.delete(id);
      }
    }
  };
  for (const s of sections) {
    if (s.id !== 0) flushMissing(rank(s.id));
    switch (s.id) {
      case 1:
        chunks.push(section(1, withCount(s, 1, [0x60, 1, 0x7f, 1, 0x7f])));
        break;
      case 3:
        chunks.push(section(3, withCount(s, 1, leb(types))));
        break;
      case 6:
        chunks.push(section(6, withCount(s, 1, globalEntry)));
        break;
      case 7:
        chunks.push(section(7, withCount(s, 1, exportEntry)));
        break;
      case 10: {
        const r = new Reader(bytes, s.body, s.end, codeFail);
        const n = r.u32();
        const growCall = { replace: [0x10, ...leb(grow)] };
        const bodies: Uint8Array[] = [Uint8Array.from(leb(n + 1))];
        for (let i = 0; i < n; i++) {
          const size = r.u32();
          const end = r.pos + size;
          // The module has one memory (checked above): every memory.grow is of memory 0.
          const b = rewriteBody(r, end, (op) => (op === 0x40 ? growCall : undefined), codeFail);
          bodies.push(Uint8Array.from(leb(b.length)), b);
          r.pos = end;
        }
        bodies.push(Uint8Array.from([...leb(growBody.length), ...growBody]));
        const content = concat(bodies);
        chunks.push(Uint8Array.from([10, ...leb(content.length)]), content);
        break;
      }
      default:
        chunks.push(bytes.subarray(s.start, s.end));
    }
  }
  flushMissing(Infinity);
  return concat(chunks);
}

/**
 * Preemption points for modules that share a thread, as wasmtime's epoch
 * interruption adds them: a module busy in a loop with no WASI call (or
 * recursing) would otherwise hold its thread, stalling every neighbour, and
 * could only be stopped by terminating the thread with all its modules.
 *
 * At every function entry and `loop` header the rewrite counts down an added
 * mutable global; each {@link PREEMPT_FUEL} steps it resets the count and calls
 * the function in slot 0 of an added one-slot table, exported as
 * {@link PREEMPT_TABLE_EXPORT}. The worker puts a function there
 * (worker/preempt.mjs) that stops the module when its container is stopped
 * and, once the module has run its time slice, suspends it (JSPI) until the
 * thread's other modules had a turn:
 *
 *   global.get $fuel  i32.eqz
 *   if  i32.const FUEL  global.set $fuel  i32.const 0  call_indirect (type []→[]) $preempt  end
 *   global.get $fuel  i32.const 1  i32.sub  global.set $fuel
 *
 * A table rather than an imported function, so that no index of the module
 * moves: the type, the global and the table are appended after the module's
 * own (indices of functions would shift with a new import, and with them
 * every call, element, export and the name section that trap backtraces read).
 *
 * A module the decoder (wasm-code.ts) does not understand is left as it is
 * ({@link Preemption} says why): it runs as before, preemptible only at its
 * WASI calls.
 */
import { concat, leb, Reader, sectionsOf } from './memory-cap.ts';
import { indexSpaces, rewriteBody, sleb } from './wasm-code.ts';

/** The export of the one-slot table whose function the preemption points call. */
export const PREEMPT_TABLE_EXPORT = 'nodelet:preempt';

/** Loop iterations and calls between two calls of the preemption function (~10 µs of a tight loop). */
export const PREEMPT_FUEL = 10_000;

/** The outcome of {@link addPreemption}. */
export type Preemption =
  { readonly bytes: Uint8Array; readonly preemptible: true } | { readonly bytes: Uint8Array; readonly preemptible: false; readonly why: string };

class Unsupported extends Error {}
const fail = (m: string) => new Unsupported(m);

/** Adds preemption points to `bytes` (see the file's comment); never throws. */
export function addPreemption(bytes: Uint8Array): Preemption {
  try {
    return { bytes: rewrite(bytes), preemptible: true };
  } catch (e) {
    return { bytes, preemptible: false, why: (e as Error).message };
  }
}

/** Section ids in the order the binary format requires (the tag section, 13, sits between memory and global). */
const ORDER = [1, 2, 3, 4, 5, 13, 6, 7, 8, 9, 12, 10, 11];
const rank = (id: number) => ORDER.indexOf(id);

function rewrite(bytes: Uint8Array): Uint8Array {
  const sections = sectionsOf(bytes, fail);
  const { types, imported, defined } = indexSpaces(bytes, sections, fail);
  if (!sections.some((s) => s.id === 10)) throw fail('no code section');
  // The slot is filled after instantiation: a start function would call it empty (and runs where nothing may suspend).
  if (sections.some((s) => s.id === 8)) throw fail('a start section');
  const type = types;
  const table = imported.tables + defined.tables;
  const fuel = imported.globals + defined.globals;
  const get = [0x23, ...leb(fuel)];
  const set = [0x24, ...leb(fuel)];
  const check = [
    ...[...get, 0x45, 0x04, 0x40], // global.get $fuel  i32.eqz  if
    ...[0x41, ...sleb(PREEMPT_FUEL), ...set, 0x41, 0x00, 0x11, ...leb(type), ...leb(table), 0x0b],
    ...[...get, 0x41, 0x01, 0x6b, ...set], // $fuel -= 1
  ];
  const exportEntry = [...leb(PREEMPT_TABLE_EXPORT.length), ...new TextEncoder().encode(PREEMPT_TABLE_EXPORT), 0x01, ...leb(table)];
  const added: Record<number, { entry: number[] }> = {
    1: { entry: [0x60, 0x00, 0x00] },
    4: { entry: [0x70, 0x01, 0x01, 0x01] }, // funcref, min 1 max 1
    6: { entry: [0x7f, 0x01, 0x41, ...sleb(PREEMPT_FUEL), 0x0b] },
    7: { entry: exportEntry },
  };
  const section = (id: number, content: number[]) => Uint8Array.from([id, ...leb(content.length), ...content]);
  const chunks: Uint8Array[] = [bytes.subarray(0, 8)];
  const missing = new Set(
    Object.keys(added)
      .map(Number)
      .filter((id) => !sections.some((s) => s.id === id)),
  );
  const flushMissing = (before: number) => {
    for (const id of [...missing].sort((a, b) => rank(a) - rank(b))) {
      if (rank(id) >= rank(before)) break;
      chunks.push(section(id, [1, ...added[id]!.entry]));
      missing.delete(id);
    }
  };
  for (const s of sections) {
    if (s.id !== 0) flushMissing(s.id);
    const add = added[s.id];
    if (add) {
      const sr = new Reader(bytes, s.body, s.end, fail);
      const n = sr.u32();
      chunks.push(section(s.id, [...leb(n + 1), ...bytes.subarray(sr.pos, s.end), ...add.entry]));
    } else if (s.id === 10) {
      const sr = new Reader(bytes, s.body, s.end, fail);
      const n = sr.u32();
      const bodies: Uint8Array[] = [Uint8Array.from(leb(n))];
      const atLoop = { after: check };
      for (let i = 0; i < n; i++) {
        const size = sr.u32();
        const end = sr.pos + size;
        const body = rewriteBody(sr, end, (op) => (op === 0x03 ? atLoop : undefined), fail, check);
        bodies.push(Uint8Array.from(leb(body.length)), body);
        sr.pos = end;
      }
      const content = concat(bodies);
      chunks.push(Uint8Array.from([10, ...leb(content.length)]), content);
    } else chunks.push(bytes.subarray(s.start, s.end));
  }
  // every section added comes before the code section, which every module with code has
  return concat(chunks);
}

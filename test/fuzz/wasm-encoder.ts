/**
 * Builds small WebAssembly binaries for the fuzz suite: valid modules with a
 * chosen pathology (endless loop, deep recursion, huge memory, a trap, an
 * unknown import) that nodelet must contain. Hand-written: the suite needs a
 * dozen byte-exact templates, and a WAT toolchain (wabt) would be a large
 * dependency for that.
 */

/** LEB128 unsigned. */
export function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}

const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const name = (s: string): number[] => [...uleb(Buffer.byteLength(s)), ...Buffer.from(s)];
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];

/** What a template module contains. */
export interface ModuleShape {
  /** Body of `_start` (instructions, without the final `end`). */
  readonly start: number[];
  /** Memory limits in 64 KiB pages. */
  readonly memory?: { min: number; max?: number };
  /** An import the runtime does not provide. */
  readonly unknownImport?: boolean;
  /** Declare `_start` as recursive function 0 calling itself. */
  readonly locals?: number;
}

/** A module exporting `memory` and `_start` (the WASI command ABI). */
export function wasmModule(shape: ModuleShape): Buffer {
  const mem = shape.memory ?? { min: 1 };
  const types = section(1, vec([[0x60, 0x00, 0x00]]));
  const imports = shape.unknownImport ? section(2, vec([[...name('nodelet_fuzz'), ...name('missing'), 0x00, 0x00]])) : [];
  const fnIndex = shape.unknownImport ? 1 : 0;
  const funcs = section(3, vec([[0x00]]));
  const memory = section(5, vec([mem.max === undefined ? [0x00, ...uleb(mem.min)] : [0x01, ...uleb(mem.min), ...uleb(mem.max)]]));
  const exports = section(
    7,
    vec([
      [...name('memory'), 0x02, 0x00],
      [...name('_start'), 0x00, ...uleb(fnIndex)],
    ]),
  );
  const locals = shape.locals ? [0x01, ...uleb(shape.locals), 0x7f] : [0x00];
  const body = [...locals, ...shape.start, 0x0b];
  const code = section(10, vec([[...uleb(body.length), ...body]]));
  return Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, ...types, ...imports, ...funcs, ...memory, ...exports, ...code]);
}

/** `_start` bodies. `self` is the function index of `_start` (1 with an unknown import). */
export const BODIES = {
  ok: (): number[] => [],
  loop: (): number[] => [0x03, 0x40, 0x0c, 0x00, 0x0b],
  recurse: (self: number): number[] => [0x10, ...uleb(self)],
  trap: (): number[] => [0x00],
  /** memory.grow by 1 page until it fails, then trap. */
  grow: (): number[] => [0x03, 0x40, 0x41, 0x01, 0x40, 0x00, 0x41, 0x7f, 0x47, 0x0d, 0x00, 0x0b, 0x00],
  /** `depth` nested blocks. */
  nested: (depth: number): number[] => [...Array<number[]>(depth).fill([0x02, 0x40]).flat(), ...Array<number>(depth).fill(0x0b)],
} as const;

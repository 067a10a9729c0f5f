/**
 * The preemption rewrite (preemption.ts) on small modules assembled here byte by byte: the slot
 * function is called once per PREEMPT_FUEL loop iterations and calls, no index of the module
 * moves, and modules it must not touch are left as they are.
 */
import { describe, expect, it } from 'vitest';
import { addPreemption, PREEMPT_FUEL, PREEMPT_TABLE_EXPORT } from '../src/preemption.ts';

const enc = (s: string) => [...new TextEncoder().encode(s)];
const section = (id: number, content: number[]) => [id, content.length, ...content];
const HEADER = [0, 0x61, 0x73, 0x6d, 1, 0, 0, 0];

/**
 * (func $twice (export "twice") (param i32) (result i32) local.get 0 i32.const 2 i32.mul)
 * (func (export "run") (param i32) (result i32) (local i32)
 *   (loop local.get 1 call $twice drop ... local.get 0 i32.const 1 i32.sub local.tee 0 br_if 0) local.get 0)
 * `own` (table and global sections) goes before the export section, `late` (a start section) after it.
 */
function module(own: number[] = [], late: number[] = []): Uint8Array {
  const twice = [0, 0x20, 0, 0x41, 2, 0x6c, 0x0b];
  const run = [1, 1, 0x7f, 0x03, 0x40, 0x20, 1, 0x10, 0, 0x1a, 0x20, 0, 0x41, 1, 0x6b, 0x22, 0, 0x0d, 0, 0x0b, 0x20, 0, 0x0b];
  return Uint8Array.from([
    ...HEADER,
    ...section(1, [1, 0x60, 1, 0x7f, 1, 0x7f]),
    ...section(3, [2, 0, 0]),
    ...own,
    ...section(7, [2, 5, ...enc('twice'), 0, 0, 3, ...enc('run'), 0, 1]),
    ...late,
    ...section(10, [2, twice.length, ...twice, run.length, ...run]),
  ]);
}

/** Instantiates `bytes` and fills its preemption slot with a function counting its calls. */
function withCounter(bytes: Uint8Array) {
  let calls = 0;
  // (module (type (func)) (import "h" "f" (func)) (export "f" (func 0))): a table holds Wasm functions only
  const helper = Uint8Array.from([
    ...HEADER,
    ...section(1, [1, 0x60, 0, 0]),
    ...section(2, [1, 1, ...enc('h'), 1, ...enc('f'), 0, 0]),
    ...section(7, [1, 1, ...enc('f'), 0, 0]),
  ]);
  const f = new WebAssembly.Instance(new WebAssembly.Module(helper), { h: { f: () => void calls++ } }).exports.f;
  const exports = new WebAssembly.Instance(new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>)).exports;
  (exports[PREEMPT_TABLE_EXPORT] as WebAssembly.Table).set(0, f);
  return { run: exports.run as (n: number) => number, twice: exports.twice as (n: number) => number, calls: () => calls };
}

describe('addPreemption', () => {
  it('calls the slot once per PREEMPT_FUEL loop iterations and function entries, and changes nothing else', () => {
    const r = addPreemption(module());
    expect(r.preemptible).toBe(true);
    const m = withCounter(r.bytes);
    expect(m.twice(21)).toBe(42);
    expect(m.calls()).toBe(0);
    // 50,000 iterations, each entering the loop header and $twice, plus the entry of run: 100,001 steps
    expect(m.run(50_000)).toBe(0);
    expect(m.calls()).toBe(Math.floor((100_001 + 1) / PREEMPT_FUEL));
  });

  it('keeps every index: a module with tables, globals and exports of its own still works', () => {
    // (table 1 funcref) (global (mut i32) 7): the added table and global come after them
    const bytes = module([...section(4, [1, 0x70, 0, 1]), ...section(6, [1, 0x7f, 1, 0x41, 7, 0x0b])]);
    const plain = new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>);
    const r = addPreemption(bytes);
    expect(r.preemptible).toBe(true);
    const m = withCounter(r.bytes);
    expect(m.twice(4)).toBe(8);
    expect(WebAssembly.Module.exports(new WebAssembly.Module(r.bytes as Uint8Array<ArrayBuffer>)).map((e) => e.name)).toEqual([
      ...WebAssembly.Module.exports(plain).map((e) => e.name),
      PREEMPT_TABLE_EXPORT,
    ]);
  });

  it('leaves a module with a start section, or with an instruction it does not know, as it is', () => {
    const start = module([], section(8, [0]));
    expect(addPreemption(start)).toMatchObject({ preemptible: false, why: 'a start section', bytes: start });
    const unknown = module();
    unknown[unknown.length - 3] = 0xf0; // the last `local.get 0` of run becomes an unknown opcode
    expect(addPreemption(unknown)).toMatchObject({ preemptible: false, bytes: unknown });
  });
});

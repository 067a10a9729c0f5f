/**
 * How a trap is reported (worker/trap-report.mjs): kind and message, the Wasm backtrace with the
 * function names of the module's name section, unbounded recursion folded into one line, and the
 * whole within upstream's 4 KiB termination message.
 */
import { describe, expect, it } from 'vitest';
import { describeTrap, TERMINATION_MESSAGE_MAX } from '../src/worker/trap-report.mjs';

const enc = (s: string) => [...new TextEncoder().encode(s)];
const section = (id: number, content: number[]) => [id, content.length, ...content];
const name = (s: string) => [s.length, ...enc(s)];

/**
 * (func $boom unreachable) (func $outer call $boom) (func $down (param i32) … calls itself while
 * the argument is non-zero, then traps), exported as `outer` and `down`, with a name section.
 */
function namedModule(): Uint8Array {
  const boom = [0, 0x00, 0x0b];
  const outer = [0, 0x10, 0, 0x0b];
  // if (local 0) { down(local 0 - 1) } else { unreachable }
  const down = [0, 0x20, 0, 0x04, 0x40, 0x20, 0, 0x41, 1, 0x6b, 0x10, 2, 0x05, 0x00, 0x0b, 0x0b];
  const fnNames = [3, 0, ...name('boom'), 1, ...name('outer'), 2, ...name('down')];
  const nameSection = [...name('name'), 1, fnNames.length, ...fnNames];
  return Uint8Array.from([
    0,
    0x61,
    0x73,
    0x6d,
    1,
    0,
    0,
    0,
    ...section(1, [2, 0x60, 0, 0, 0x60, 1, 0x7f, 0]),
    ...section(3, [3, 0, 0, 1]),
    ...section(7, [2, ...name('outer'), 0, 1, ...name('down'), 0, 2]),
    ...section(10, [3, boom.length, ...boom, outer.length, ...outer, down.length, ...down]),
    ...section(0, nameSection),
  ]);
}

const caught = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('did not trap');
};

describe('describeTrap', () => {
  const ex = new WebAssembly.Instance(new WebAssembly.Module(namedModule() as Uint8Array<ArrayBuffer>)).exports as { outer(): void; down(n: number): void };

  it('gives the trap, then the frames by name, innermost first', () => {
    const report = describeTrap(caught(() => ex.outer()));
    expect(report).toMatch(
      /^RuntimeError: unreachable\nwasm backtrace:\n {4}at boom \(wasm-function\[0\]:0x[0-9a-f]+\)\n {4}at outer \(wasm-function\[1\]:0x[0-9a-f]+\)$/,
    );
  });

  it('folds a frame repeated by recursion into one line with a count', () => {
    const report = describeTrap(caught(() => ex.down(100)));
    const lines = report.split('\n');
    expect(lines[2]).toMatch(/^ {4}at down \(wasm-function\[2\]:0x[0-9a-f]+\)$/); // the frame that trapped
    expect(report).toMatch(/\n {4}… the frame above \d+ more times/);
    expect(lines.length).toBeLessThan(8);
  });

  it('keeps the report within 4 KiB and says what is not a trap', () => {
    const long = new RangeError('x'.repeat(10_000));
    const report = describeTrap(long);
    expect(Buffer.byteLength(report)).toBeLessThanOrEqual(TERMINATION_MESSAGE_MAX);
    expect(report.endsWith('\n…')).toBe(true);
    expect(describeTrap('plain text')).toBe('plain text');
  });
});

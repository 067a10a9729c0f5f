/**
 * The two rewrites that let an http component's instance be put back in its start state after a
 * request: its mutable globals exported (global-exports.ts) and its stack depth recorded
 * (stack-tracking.ts), on small modules assembled here byte by byte; and the serving bounds read
 * from a container's resources and annotations (http-serving-config.ts).
 */
import { describe, expect, it } from 'vitest';
import { isInvalidArgument } from '@nodelet/plugin-api/v1';
import { exportMutableGlobals } from '../src/global-exports.ts';
import { STACK_LOW_EXPORT, trackStack } from '../src/stack-tracking.ts';
import { DEFAULT_MAX_CONCURRENCY, HTTP_MAX_CONCURRENCY_ANNOTATION, HTTP_REQUEST_TIMEOUT_ANNOTATION, httpServing } from '../src/http-serving-config.ts';

const enc = (s: string) => [...new TextEncoder().encode(s)];
const section = (id: number, content: number[]) => [id, content.length, ...content];
const STACK_TOP = [0x80, 0x80, 0x04]; // 65536 as signed LEB128

/**
 * (memory 2) (global $sp (mut i32) 65536) (global $n (mut i64) 11) (data at `dataAt` "hi")
 * (func (export "run") (param i32): takes `param` bytes of stack, stores 7 at its bottom, gives
 * them back, sets $n to 5); `extra` is spliced into the function's code.
 */
function module(dataAt: number[] = STACK_TOP, extra: number[] = []): Uint8Array {
  const code = [0, 0x23, 0, 0x20, 0, 0x6b, 0x24, 0, 0x23, 0, 0x41, 7, 0x3a, 0, 0, ...extra, 0x23, 0, 0x20, 0, 0x6a, 0x24, 0, 0x42, 5, 0x24, 1, 0x0b];
  return Uint8Array.from([
    0,
    0x61,
    0x73,
    0x6d,
    1,
    0,
    0,
    0,
    ...section(1, [1, 0x60, 1, 0x7f, 0]),
    ...section(3, [1, 0]),
    ...section(5, [1, 0, 2]),
    // $n starts at 11 = 0x0b, the `end` opcode's value: the initializer must be decoded, not scanned
    ...section(6, [2, 0x7f, 1, 0x41, ...STACK_TOP, 0x0b, 0x7e, 1, 0x42, 11, 0x0b]),
    ...section(7, [1, 3, ...enc('run'), 0, 0]),
    ...section(10, [1, code.length, ...code]),
    ...section(11, [1, 0, 0x41, ...dataAt, 0x0b, 2, ...enc('hi')]),
  ]);
}

const instantiate = (bytes: Uint8Array) => new WebAssembly.Instance(new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>)).exports;

describe('exportMutableGlobals', () => {
  it('exports every mutable global by index, and they follow the module', () => {
    const { bytes, globals } = exportMutableGlobals(module());
    expect(globals).toEqual([0, 1]);
    const ex = instantiate(bytes);
    const sp = ex['nodelet:global:0'] as WebAssembly.Global;
    const n = ex['nodelet:global:1'] as WebAssembly.Global;
    expect([sp.value, n.value]).toEqual([65536, 11n]);
    (ex.run as (n: number) => void)(100);
    expect([sp.value, n.value]).toEqual([65536, 5n]);
  });
});

describe('trackStack', () => {
  it('records the lowest stack pointer since it was last reset', () => {
    const t = trackStack(exportMutableGlobals(module()).bytes);
    if ('untracked' in t) throw new Error(t.untracked);
    expect(t).toMatchObject({ stackTop: 65536, stackGlobal: 0 });
    const ex = instantiate(t.bytes);
    const low = ex[STACK_LOW_EXPORT] as WebAssembly.Global;
    expect(low.value).toBe(65536);
    (ex.run as (n: number) => void)(100);
    (ex.run as (n: number) => void)(40);
    expect(low.value).toBe(65436);
    expect((ex['nodelet:global:0'] as WebAssembly.Global).value).toBe(65536);
  });

  it('leaves a module whose data lies below its stack as it is (it is reset in full)', () => {
    const bytes = module([0x80, 0x08]); // data at 1024, under the stack top
    const t = trackStack(bytes);
    expect(t).toMatchObject({ untracked: expect.stringContaining('not linked stack-first') });
    expect(t.bytes).toBe(bytes);
  });

  it('leaves a module with an instruction it does not know as it is', () => {
    const t = trackStack(module(STACK_TOP, [0xfb, 0x00, 0x1a]));
    expect(t).toMatchObject({ untracked: expect.stringContaining('unknown instruction 0xfb') });
  });
});

describe('httpServing', () => {
  const spec = (annotations: Record<string, string> = {}, limits: { memoryBytes?: number; cpuMillis?: number } = {}) => ({
    name: 'main',
    pod: { namespace: 'ns', name: 'p', uid: 'u', annotations },
    limits,
  });

  it('keeps two instances ready per CPU of the limit, bounds instances by the memory limit', () => {
    expect(httpServing(spec(), 1 << 20)).toEqual({ bounds: { warm: 2, max: DEFAULT_MAX_CONCURRENCY }, requestTimeoutMs: undefined });
    expect(httpServing(spec({}, { cpuMillis: 1500, memoryBytes: 64 << 20 }), 4 << 20).bounds).toEqual({ warm: 3, max: 16 });
  });

  it('reads the concurrency and the request timeout from annotations', () => {
    const s = httpServing(spec({ [HTTP_MAX_CONCURRENCY_ANNOTATION]: '10', [HTTP_REQUEST_TIMEOUT_ANNOTATION]: '1.5s' }), 1 << 20);
    expect(s).toEqual({ bounds: { warm: 2, max: 10 }, requestTimeoutMs: 1500 });
    expect(httpServing(spec({ [HTTP_REQUEST_TIMEOUT_ANNOTATION]: '250ms' }), 0).requestTimeoutMs).toBe(250);
  });

  it('refuses annotations that do not parse', () => {
    for (const a of <Array<Record<string, string>>>[
      { [HTTP_MAX_CONCURRENCY_ANNOTATION]: '0' },
      { [HTTP_MAX_CONCURRENCY_ANNOTATION]: 'many' },
      { [HTTP_REQUEST_TIMEOUT_ANNOTATION]: '30' },
    ]) {
      let err: unknown;
      try {
        httpServing(spec(a), 0);
      } catch (e) {
        err = e;
      }
      expect(isInvalidArgument(err), JSON.stringify(a)).toBe(true);
    }
  });
});

/**
 * In-place resize of a running module's memory limit (`resizeContainer`): the rewrite that
 * makes `memory.grow` ask a changeable limit (grow-limit.ts), on a module assembled here, and
 * the provider raising and lowering the limit of real modules without restarting them — on a
 * thread of their own, sleeping or busy — with the refusals core reports.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isNotFound, isNotSupported } from '@nodelet/plugin-api/v1';
import { KILLED_EXIT_CODE, WasiProvider } from '../src/index.ts';
import { limitGrow, MEMORY_LIMIT_EXPORT, NO_LIMIT_PAGES } from '../src/grow-limit.ts';
import { capModuleMemory } from '../src/memory-cap.ts';
import { FakeImages, logText, podContext, providerContext, pulledFixture, scratch, spec } from './helpers.ts';
import { until } from '../../../test/harness/until.ts';
import { freePort } from '../../../test/harness/ports.ts';
import { httpGet } from '../../../test/harness/http-get.ts';

const MiB = 1 << 20;
const tmp = scratch();
let provider: WasiProvider;
beforeAll(async () => {
  provider = new WasiProvider();
  await provider.init(providerContext(new FakeImages()));
});
afterAll(async () => {
  await provider.shutdown();
  tmp.cleanup();
});

// (module (memory (export "memory") 1)
//   (func (export "grow") (param i32) (result i32) local.get 0 memory.grow)
//   (func (export "_start")))
// prettier-ignore
const GROWER = Uint8Array.from([
  0, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
  // types: (i32)->(i32), ()->()
  1, 9, 2, 0x60, 1, 0x7f, 1, 0x7f, 0x60, 0, 0,
  // functions: type 0, type 1
  3, 3, 2, 0, 1,
  // memory: min 1
  5, 3, 1, 0, 1,
  // exports: memory, grow, _start
  7, 26, 3, 6, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 2, 0, 4, 0x67, 0x72, 0x6f, 0x77, 0, 0, 6, 0x5f, 0x73, 0x74, 0x61, 0x72, 0x74, 0, 1,
  // code: local.get 0 memory.grow 0 end; end
  10, 11, 2, 6, 0, 0x20, 0, 0x40, 0, 0x0b, 2, 0, 0x0b,
]);

describe('limitGrow', () => {
  const instantiate = async (bytes: Uint8Array) => {
    const inst = await WebAssembly.instantiate(await WebAssembly.compile(bytes as Uint8Array<ArrayBuffer>));
    const x = inst.exports as { grow: (pages: number) => number; memory: WebAssembly.Memory; [MEMORY_LIMIT_EXPORT]: WebAssembly.Global };
    return { grow: x.grow, memory: x.memory, limit: x[MEMORY_LIMIT_EXPORT] };
  };

  it('bounds memory.grow by an exported global that can be raised and lowered while the instance lives', async () => {
    const r = limitGrow(GROWER, 3);
    if (!('bytes' in r)) throw new Error(r.refused);
    const { grow, memory, limit } = await instantiate(r.bytes);
    expect(limit.value).toBe(3);
    expect(grow(2)).toBe(1); // 1 → 3 pages: at the limit
    expect(grow(1)).toBe(-1); // past it: refused as at a declared maximum
    expect(memory.buffer.byteLength).toBe(3 * 65536);
    limit.value = 5; // raised while the instance runs
    expect(grow(2)).toBe(3);
    expect(grow(1)).toBe(-1);
    limit.value = 4; // lowered below what it holds: it cannot grow, it does not shrink
    expect(grow(1)).toBe(-1);
    expect(memory.buffer.byteLength).toBe(5 * 65536);
    expect(grow(0x7fffffff)).toBe(-1); // no overflow of size + delta
  });

  it('keeps the memory declaration as it was and, without a limit, starts the global at all a 32-bit memory can hold', async () => {
    const r = limitGrow(GROWER, NO_LIMIT_PAGES);
    if (!('bytes' in r)) throw new Error(r.refused);
    expect(capModuleMemory(r.bytes).memories).toEqual(capModuleMemory(GROWER).memories);
    const { grow, limit } = await instantiate(r.bytes);
    expect(limit.value).toBe(NO_LIMIT_PAGES);
    expect(grow(10)).toBe(1);
  });

  it('rewrites a real clang-built module that still runs', async () => {
    const bytes = readFileSync((await pulledFixture('grow-on-demand')).path);
    const r = limitGrow(bytes, 100);
    expect('bytes' in r).toBe(true);
  });

  it('refuses what it cannot rewrite, saying why', () => {
    const noCode = GROWER.slice(0, 8);
    expect(limitGrow(noCode, 1)).toEqual({ refused: 'the module has 0 memories, not one' });
    const badOp = GROWER.slice();
    badOp[badOp.length - 6] = 0xff; // memory.grow → an unknown instruction
    expect(limitGrow(badOp, 1)).toMatchObject({ refused: expect.stringMatching(/unknown instruction 0xff/) });
  });
});

describe('resizeContainer', () => {
  const start = async (fixture: string, args: string[], memoryBytes?: number, over = {}) => {
    const s = spec(await pulledFixture(fixture), tmp.dir, args, { limits: memoryBytes === undefined ? {} : { memoryBytes }, qosClass: 'Burstable', ...over });
    return { s, c: await provider.startContainer(s, podContext()) };
  };

  it('raises the memory limit of a module that waits for memory: it gets it and goes on, not restarted', async () => {
    const { s, c } = await start('grow-on-demand', ['12'], 8 * MiB);
    await until(() => logText(s.logPath).includes('waiting for memory at'));
    const at = Number(/waiting for memory at (\d+) MiB/.exec(logText(s.logPath))![1]);
    expect(at).toBeGreaterThan(2);
    expect(at).toBeLessThan(8);
    expect(await provider.resizeContainer(s.id, { memoryBytes: 16 * MiB })).toEqual({ applied: true });
    await until(() => logText(s.logPath).includes('grown 12 MiB\n'));
    expect((await provider.stats(s.id)).memory!.workingSetBytes).toBeGreaterThan(12 * MiB);
    await c.stop(0);
    expect(await c.exit).toMatchObject({ exitCode: KILLED_EXIT_CODE, reason: 'Error' });
  });

  it('lowers the limit only above what the module holds, and then bounds its growth to it', async () => {
    const { s, c } = await start('grow-on-demand', ['6'], 32 * MiB);
    await until(() => logText(s.logPath).includes('grown 6 MiB\n'));
    const held = (await provider.stats(s.id)).memory!.workingSetBytes;
    const below = await provider.resizeContainer(s.id, { memoryBytes: 4 * MiB });
    expect(below).toEqual({ applied: false, memoryUsageBytes: held });
    expect(await provider.resizeContainer(s.id, { memoryBytes: held })).toEqual({ applied: false, memoryUsageBytes: held }); // not below: equal
    expect(await provider.resizeContainer(s.id, { memoryBytes: held + 2 * MiB })).toEqual({ applied: true });
    expect(await provider.resizeContainer(s.id, { memoryBytes: 64 * MiB })).toEqual({ applied: true }); // and up again
    await c.stop(0);
    await c.exit;
  });

  it('reaches a module suspended in accept (JSPI): the limit changes on the event loop of its thread', async () => {
    const port = await freePort();
    const { s, c } = await start('http-server', ['--max=1'], 16 * MiB, { ports: [{ containerPort: port, protocol: 'TCP' }] });
    await until(() => logText(s.logPath).includes('listening on'));
    expect(await provider.resizeContainer(s.id, { memoryBytes: 32 * MiB })).toEqual({ applied: true });
    expect(await provider.resizeContainer(s.id, { memoryBytes: 64 * 1024 })).toMatchObject({ applied: false });
    expect((await httpGet('127.0.0.1', port)).status).toBe(200);
    expect(await c.exit).toMatchObject({ exitCode: 0 });
  });

  it('answers NotFound once the container ended, and NotSupported for a BestEffort pod (no limit to change)', async () => {
    const { s, c } = await start('hello', []);
    await c.exit;
    const ended = await provider.resizeContainer(s.id, { memoryBytes: MiB }).catch((e) => e);
    expect(isNotFound(ended)).toBe(true);
    const be = await start('sleep', ['3600'], undefined, { qosClass: 'BestEffort' });
    await until(() => logText(be.s.logPath).includes('tick'));
    const refused = await provider.resizeContainer(be.s.id, { memoryBytes: 16 * MiB }).catch((e) => e);
    expect(isNotSupported(refused)).toBe(true);
    expect(refused.message).toMatch(/cannot be resized in place: its pod is BestEffort/);
    await be.c.stop(0);
  });
});

import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isInvalidArgument } from '@nodelet/plugin-api/v1';
import { capModuleMemory, KILLED_EXIT_CODE, WasiProvider } from '../src/index.ts';
import { MemoryCapError } from '../src/memory-cap.ts';
import { ModuleCache } from '../src/module-cache.ts';
import { FakeImages, logText, podContext, providerContext, pulledFile, pulledFixture, scratch, spec } from './helpers.ts';
import { until } from '../../../test/harness/until.ts';

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

// (module (import "env" "memory" (memory 2 100)) (func (export "_start")))
const IMPORTED_MEMORY = Uint8Array.from([
  0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 4, 1, 0x60, 0, 0, 2, 16, 1, 3, 0x65, 0x6e, 0x76, 6, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 2, 1, 2, 100, 3, 2, 1, 0, 7, 10,
  1, 6, 0x5f, 0x73, 0x74, 0x61, 0x72, 0x74, 0, 0, 10, 4, 1, 2, 0, 0x0b,
]);

describe('capModuleMemory', () => {
  it('leaves a module untouched without a cap and reports its memory', async () => {
    const bytes = readFileSync((await pulledFixture('hello')).path);
    const r = capModuleMemory(bytes);
    expect(r.bytes).toBe(bytes);
    expect(r.memories).toHaveLength(1);
    expect(r.memories[0]!.import).toBeUndefined();
    expect(r.memories[0]!.max).toBeUndefined(); // clang/wasm-ld declare no maximum
  });

  it('caps a defined memory so that growing past the cap fails', async () => {
    const bytes = readFileSync((await pulledFixture('hello')).path);
    const { bytes: capped, memories } = capModuleMemory(bytes, 3 * MiB + 100);
    expect(memories[0]!.max).toBe(48);
    expect(capModuleMemory(capped).memories[0]).toEqual(memories[0]); // the rewritten binary says so too
    const mod = await WebAssembly.compile(capped as Uint8Array<ArrayBuffer>);
    const stub = new Proxy({}, { get: () => () => 0 });
    const inst = await WebAssembly.instantiate(mod, { wasi_snapshot_preview1: stub });
    const memory = inst.exports.memory as WebAssembly.Memory;
    const pages = memory.buffer.byteLength / 65536;
    expect(() => memory.grow(48 - pages)).not.toThrow();
    expect(() => memory.grow(1)).toThrow(RangeError);
  });

  it('caps an imported memory, keeping a smaller declared maximum', () => {
    const r = capModuleMemory(IMPORTED_MEMORY, 10 * 65536);
    expect(r.memories).toEqual([{ import: { module: 'env', name: 'memory' }, min: 2, max: 10, shared: false }]);
    expect(capModuleMemory(r.bytes).memories[0]!.max).toBe(10);
    expect(capModuleMemory(IMPORTED_MEMORY, 1000 * 65536).memories[0]!.max).toBe(100);
  });

  it('refuses a cap below the minimum, and garbage', () => {
    expect(() => capModuleMemory(IMPORTED_MEMORY, 65536)).toThrow(/needs at least 2 pages \(128 KiB\), more than the memory limit of 1 pages/);
    expect(() => capModuleMemory(Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]))).toThrow(MemoryCapError);
    expect(() => capModuleMemory(IMPORTED_MEMORY.subarray(0, 20), MiB)).toThrow(/runs past the end|unexpected end/);
  });
});

describe('memory limits at run time', () => {
  it('reports OOMKilled when a module allocates past its limit', async () => {
    const s = spec(await pulledFixture('alloc'), tmp.dir, [], { limits: { memoryBytes: 8 * MiB } });
    const c = await provider.startContainer(s, podContext());
    const exit = await c.exit;
    expect(exit).toMatchObject({ exitCode: KILLED_EXIT_CODE, reason: 'OOMKilled' });
    expect(exit.message).toMatch(/memory limit of 8388608 bytes reached \(RuntimeError: unreachable\nwasm backtrace:\n/);
    const failedAt = Number(/malloc failed after (\d+) MiB/.exec(logText(s.logPath, 'stderr'))?.[1]);
    expect(failedAt).toBeGreaterThan(4);
    expect(failedAt).toBeLessThan(8);
  });

  it('refuses to start a module whose minimum memory exceeds the limit', async () => {
    const hello = await pulledFixture('hello');
    const err = await provider.startContainer(spec(hello, tmp.dir, [], { limits: { memoryBytes: 64 * 1024 } }), podContext()).catch((e) => e);
    expect(isInvalidArgument(err)).toBe(true);
    expect(err.reason).toBe('OOMKilled');
  });

  it('runs a module that imports its memory', async () => {
    const path = join(tmp.dir, 'imported-memory.wasm');
    writeFileSync(path, IMPORTED_MEMORY);
    const c = await provider.startContainer(spec(pulledFile(path, 'im:1'), tmp.dir, [], { limits: { memoryBytes: 4 * MiB } }), podContext());
    expect(await c.exit).toMatchObject({ exitCode: 0, reason: 'Completed' });
  });
});

describe('ModuleCache', () => {
  it('compiles once per digest and cap', async () => {
    const cache = new ModuleCache(2);
    const img = await pulledFixture('hello');
    const a = await cache.load(img);
    const b = await cache.load(img);
    expect(a.compileMs).toBeGreaterThan(0);
    expect(b.compileMs).toBe(0);
    expect(b.module).toBe(a.module);
    const capped = await cache.load(img, 4 * MiB);
    expect(capped.module).not.toBe(a.module);
    expect(capped.memories[0]!.max).toBe(64);
    await cache.load(await pulledFixture('trap'));
    expect(cache.size).toBe(2);
    expect((await cache.load(img)).compileMs).toBeGreaterThan(0); // the uncapped entry was evicted first
  });
  it('does not cache failures', async () => {
    const cache = new ModuleCache();
    const path = join(tmp.dir, 'later-fixed.wasm');
    writeFileSync(path, 'junk');
    const img = pulledFile(path, 'x:1');
    await expect(cache.load(img)).rejects.toMatchObject({ code: 'InvalidImage' });
    expect(cache.size).toBe(0);
    writeFileSync(path, readFileSync((await pulledFixture('hello')).path));
    await expect(cache.load(img)).resolves.toMatchObject({ memories: [{ min: expect.any(Number) }] });
  });
});

describe('many modules', () => {
  it('runs 20 sleeping modules concurrently and stops them all without leaking fds', async () => {
    const img = await pulledFixture('sleep');
    const fdsBefore = readdirSync('/proc/self/fd').length;
    const mounts = [{ name: 'v', hostPath: tmp.dir, containerPath: '/data', readOnly: true }];
    const specs = Array.from({ length: 20 }, () => spec(img, tmp.dir, ['3600'], { mounts }));
    const running = await Promise.all(specs.map((s) => provider.startContainer(s, podContext())));
    expect(provider.runningCount).toBe(20);
    await Promise.all(specs.map((s) => until(() => logText(s.logPath).includes('tick 1\n'))));
    await provider.shutdown();
    for (const c of running) expect(await c.exit).toMatchObject({ exitCode: KILLED_EXIT_CODE, reason: 'Error' });
    expect(provider.runningCount).toBe(0);
    expect(readdirSync('/proc/self/fd').length).toBeLessThanOrEqual(fdsBefore);
  });
});

describe('descriptors', () => {
  it('are all closed when modules that opened files end', async () => {
    const img = await pulledFixture('read-file');
    writeFileSync(join(tmp.dir, 'f.txt'), 'x');
    const mounts = [
      { name: 'a', hostPath: tmp.dir, containerPath: '/a', readOnly: true },
      { name: 'b', hostPath: tmp.dir, containerPath: '/b', readOnly: false },
    ];
    const run = async () => (await provider.startContainer(spec(img, tmp.dir, ['/a/f.txt', '/b/f.txt'], { mounts }), podContext())).exit;
    expect(await run()).toMatchObject({ exitCode: 0 });
    await provider.workerPool.settled(); // idle pooled workers hold descriptors too (their event loops, /dev/null)
    const fdsBefore = readdirSync('/proc/self/fd').length;
    for (let i = 0; i < 5; i++) expect(await run()).toMatchObject({ exitCode: 0 });
    await provider.workerPool.settled();
    expect(readdirSync('/proc/self/fd').length).toBeLessThanOrEqual(fdsBefore);
  });
});

// `nodelet run`'s on-disk cache of V8's compiled code (core/cli/compile-cache.ts), in this
// process: an entry stored after a run is used by a later load; a damaged, foreign or
// another module's entry is not; the least recently used entries go beyond the bound;
// a directory others can write turns the cache off.
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WASI } from 'node:wasi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entryName, openCompileCache, type CompileCache } from '../../../core/cli/compile-cache.ts';
import { buildWasmModule } from '../../harness/wasm-modules.ts';
import { withPadding } from './wasm-padding.ts';

const root = join(tmpdir(), `compile-cache-${process.pid}`);
mkdirSync(root, { recursive: true });
afterAll(() => rmSync(root, { recursive: true, force: true }));
let seq = 0;
const freshDir = () => join(root, `c${++seq}`);

/** Fixture modules made distinct (and larger) by a custom section. */
const modules: Buffer[] = [];
beforeAll(async () => {
  const hello = readFileSync(await buildWasmModule('hello'));
  for (let i = 0; i < 3; i++) modules.push(withPadding(hello, 64 * 1024, `variant-${i}`));
}, 300_000);

/** A copy of `b` on an ArrayBuffer of its own (what WebAssembly.compile and the cache take). */
const u8 = (b: Buffer): Uint8Array<ArrayBuffer> => new Uint8Array(b);

/** Compiles `wire` and stores it as `nodelet run` does after a run (an instance, not run: nothing here needs its output). */
async function compileAndStore(cache: CompileCache, wire: Buffer): Promise<boolean> {
  const module = await WebAssembly.compile(u8(wire));
  const wasi = new WASI({ version: 'preview1', returnOnExit: true });
  const instance = new WebAssembly.Instance(module, wasi.getImportObject() as WebAssembly.Imports);
  return cache.store(wire, module, instance);
}

describe('compile cache', () => {
  it('stores a module after its run and gives it back, compiled, to a later load', async () => {
    const dir = freshDir();
    const cache = openCompileCache({ dir })!;
    expect(cache).toBeDefined();
    expect(cache.load(u8(modules[0]!))).toBeUndefined();
    expect(await compileAndStore(cache, modules[0]!)).toBe(true);
    expect(readdirSync(dir)).toEqual([entryName(modules[0]!)]);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, entryName(modules[0]!))).mode & 0o777).toBe(0o600);

    const later = openCompileCache({ dir })!; // as a later `nodelet run`
    const module = later.load(u8(modules[0]!));
    expect(module).toBeInstanceOf(WebAssembly.Module);
    expect(WebAssembly.Module.exports(module!).map((e) => e.name)).toEqual(expect.arrayContaining(['_start', 'memory']));
    expect(await compileAndStore(later, modules[0]!)).toBe(false); // used: not written again
  });

  it('refuses a damaged entry, a foreign one and one holding another module', async () => {
    const dir = freshDir();
    const cache = openCompileCache({ dir })!;
    await compileAndStore(cache, modules[0]!);
    const path = join(dir, entryName(modules[0]!));
    const good = readFileSync(path);
    const refused = (bytes: Buffer, wire = modules[0]!) => {
      writeFileSync(path, bytes);
      return openCompileCache({ dir })!.load(u8(wire)) === undefined;
    };
    const flipped = Buffer.from(good);
    flipped[flipped.length - 100]! ^= 0xff; // in V8's code: its CRC-32 no longer matches
    expect(refused(flipped)).toBe(true);
    expect(refused(good.subarray(0, good.length - 1))).toBe(true);
    expect(refused(Buffer.from('garbage'))).toBe(true);
    const headerLen = good.readUInt32LE(8);
    const header = JSON.parse(good.subarray(12, 12 + headerLen).toString()) as Record<string, unknown>;
    const foreign = Buffer.from(JSON.stringify({ ...header, node: 'v0.0.0' }));
    const len = Buffer.alloc(4);
    len.writeUInt32LE(foreign.length);
    expect(refused(Buffer.concat([good.subarray(0, 8), len, foreign, good.subarray(12 + headerLen)]))).toBe(true);
    // Another module of the same length filed under this module's name: its bytes are compared.
    const other = Buffer.from(modules[0]!);
    other[other.length - 1]! ^= 0x01; // in the padding: still a valid module
    expect(other.length).toBe(modules[0]!.length);
    writeFileSync(join(dir, entryName(other)), good);
    expect(openCompileCache({ dir })!.load(u8(other))).toBeUndefined();
    // And the intact entry is still used.
    expect(refused(good)).toBe(false);
  });

  it('removes the least recently used entries beyond its bound', async () => {
    const dir = freshDir();
    const one = await (async () => {
      const c = openCompileCache({ dir })!;
      await compileAndStore(c, modules[0]!);
      return statSync(join(dir, entryName(modules[0]!))).size;
    })();
    // Room for two entries: storing a third removes the least recently used one.
    const cache = () => openCompileCache({ dir, maxBytes: 2 * one + one / 2 })!;
    await compileAndStore(cache(), modules[1]!);
    const old = new Date(Date.now() - 60_000);
    utimesSync(join(dir, entryName(modules[0]!)), old, old);
    utimesSync(join(dir, entryName(modules[1]!)), old, old);
    expect(cache().load(u8(modules[0]!))).toBeInstanceOf(WebAssembly.Module); // used now: kept
    await compileAndStore(cache(), modules[2]!);
    expect(readdirSync(dir).sort()).toEqual([entryName(modules[0]!), entryName(modules[2]!)].sort());
  });

  it('is off in a directory others can write, that is not a directory, or whose parent is missing', () => {
    const open = freshDir();
    mkdirSync(open, { recursive: true });
    chmodSync(open, 0o777);
    expect(openCompileCache({ dir: open })).toBeUndefined();
    const file = join(root, 'a-file');
    writeFileSync(file, '');
    expect(openCompileCache({ dir: file })).toBeUndefined();
    expect(openCompileCache({ dir: join(root, 'missing', 'wasm-code') })).toBeUndefined();
  });
});

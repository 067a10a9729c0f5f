/**
 * Builds the WASI test modules of test/fixtures/wasm/ with clang + wasi-libc
 * (`apt-get install -y clang lld wasi-libc libclang-rt-14-dev-wasm32`) and
 * caches them by the hash of their source in test/.cache/wasm/.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Where the C sources of the test modules live. */
export const WASM_FIXTURES_DIR = join(ROOT, 'test', 'fixtures', 'wasm');
/** Where compiled modules are cached (git-ignored). */
export const WASM_CACHE_DIR = join(ROOT, 'test', '.cache', 'wasm');

const building = new Map<string, Promise<string>>();

/**
 * Compiles `test/fixtures/wasm/<name>.c` into
 * `test/.cache/wasm/<name>-<sha256 of the source, 16 hex>.wasm` unless that file
 * exists, and returns its path. Safe to call concurrently (also across processes:
 * the file is written under a temporary name and renamed).
 */
export async function buildWasmModule(name: string): Promise<string> {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(name)) throw new Error(`invalid wasm fixture name ${JSON.stringify(name)}`);
  const src = join(WASM_FIXTURES_DIR, `${name}.c`);
  const hash = createHash('sha256').update(readFileSync(src)).digest('hex').slice(0, 16);
  const out = join(WASM_CACHE_DIR, `${name}-${hash}.wasm`);
  if (existsSync(out)) return out;
  let p = building.get(out);
  if (!p) {
    p = compile(src, out).finally(() => building.delete(out));
    building.set(out, p);
  }
  return p;
}

async function compile(src: string, out: string): Promise<string> {
  mkdirSync(WASM_CACHE_DIR, { recursive: true });
  const tmp = `${out}.${process.pid}.${Date.now()}.tmp`;
  try {
    await run('clang', ['--target=wasm32-wasi', '-O2', '-o', tmp, src], { timeout: 120_000 });
  } catch (e) {
    rmSync(tmp, { force: true });
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    if (err.code === 'ENOENT') {
      throw new Error('clang not found: apt-get install -y clang lld wasi-libc libclang-rt-14-dev-wasm32');
    }
    throw new Error(`compiling ${src} failed: ${err.stderr ?? err.message}`);
  }
  renameSync(tmp, out);
  return out;
}

/**
 * A module whose `(start)` function loops forever (it runs during
 * instantiation, before `_start`). Hand-assembled, since clang has no way to
 * emit a start section:
 *   (module (type (func)) (func $loop (loop (br 0))) (func (export "_start"))
 *     (memory (export "memory") 1) (start $loop))
 */
export const START_LOOP_MODULE = Uint8Array.from([
  0x00,
  0x61,
  0x73,
  0x6d,
  0x01,
  0x00,
  0x00,
  0x00,
  0x01,
  0x04,
  0x01,
  0x60,
  0x00,
  0x00, // type: () -> ()
  0x03,
  0x03,
  0x02,
  0x00,
  0x00, // functions 0 and 1 of type 0
  0x05,
  0x03,
  0x01,
  0x00,
  0x01, // memory: min 1
  0x07,
  0x13,
  0x02, // exports
  0x06,
  ...Buffer.from('memory'),
  0x02,
  0x00,
  0x06,
  ...Buffer.from('_start'),
  0x00,
  0x01,
  0x08,
  0x01,
  0x00, // start: function 0
  0x0a,
  0x0c,
  0x02, // code
  0x07,
  0x00,
  0x03,
  0x40,
  0x0c,
  0x00,
  0x0b,
  0x0b, // loop (br 0) end
  0x02,
  0x00,
  0x0b, // (empty)
]);

/** Writes {@link START_LOOP_MODULE} to the module cache and returns its path. */
export async function buildStartLoopModule(): Promise<string> {
  mkdirSync(WASM_CACHE_DIR, { recursive: true });
  const hash = createHash('sha256').update(START_LOOP_MODULE).digest('hex').slice(0, 16);
  const out = join(WASM_CACHE_DIR, `start-loop-${hash}.wasm`);
  if (!existsSync(out)) {
    const tmp = `${out}.${process.pid}.${Date.now()}.tmp`;
    writeFileSync(tmp, START_LOOP_MODULE);
    renameSync(tmp, out);
  }
  return out;
}

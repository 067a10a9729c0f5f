/**
 * Builds the WASI test modules of test/fixtures/wasm/ with clang + wasi-libc
 * (`apt-get install -y clang lld wasi-libc libclang-rt-14-dev-wasm32`) and
 * caches them by the hash of their source in test/.cache/wasm/.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
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

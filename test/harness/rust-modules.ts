/**
 * Builds the Rust WASI preview1 test modules of test/fixtures/wasm-rust/<name>/
 * (`cargo build --release --target wasm32-wasip1`; `rustup target add
 * wasm32-wasip1`, see .ci/run) and caches them by the hash of their sources in
 * test/.cache/wasm/. The crates' lock files pin their dependencies.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { WASM_CACHE_DIR, WASM_FIXTURES_DIR } from './wasm-modules.ts';

const run = promisify(execFile);
/** Where the Rust test crates live. */
export const RUST_FIXTURES_DIR = join(WASM_FIXTURES_DIR, '..', 'wasm-rust');
const TARGET_DIR = join(WASM_CACHE_DIR, '..', 'cargo-target');

const building = new Map<string, Promise<string>>();

function sources(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f !== 'target')
    .flatMap((f) => (statSync(join(dir, f)).isDirectory() ? sources(join(dir, f)) : [join(dir, f)]))
    .sort();
}

/**
 * Builds `test/fixtures/wasm-rust/<name>` into `test/.cache/wasm/<name>-<hash>.wasm`
 * unless that file exists, and returns its path.
 */
export async function buildRustModule(name: string): Promise<string> {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(name)) throw new Error(`invalid Rust fixture name ${JSON.stringify(name)}`);
  const dir = join(RUST_FIXTURES_DIR, name);
  const hash = createHash('sha256');
  for (const f of sources(dir)) hash.update(relative(dir, f)).update('\0').update(readFileSync(f)).update('\0');
  const out = join(WASM_CACHE_DIR, `${name}-${hash.digest('hex').slice(0, 16)}.wasm`);
  if (existsSync(out)) return out;
  let p = building.get(out);
  if (!p) {
    p = compile(dir, name, out).finally(() => building.delete(out));
    building.set(out, p);
  }
  return p;
}

async function compile(dir: string, name: string, out: string): Promise<string> {
  mkdirSync(WASM_CACHE_DIR, { recursive: true });
  try {
    await run('cargo', ['build', '--release', '--locked', '--target', 'wasm32-wasip1', '--target-dir', TARGET_DIR], { cwd: dir, timeout: 600_000 });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    if (err.code === 'ENOENT') throw new Error('cargo not found: install Rust (rustup) and `rustup target add wasm32-wasip1`');
    throw new Error(`building ${dir} failed: ${err.stderr ?? err.message}`);
  }
  const tmp = `${out}.${process.pid}.${Date.now()}.tmp`;
  copyFileSync(join(TARGET_DIR, 'wasm32-wasip1', 'release', `${name}.wasm`), tmp);
  renameSync(tmp, out);
  return out;
}

/**
 * Bench-only Wasm modules, cached by source hash in test/.cache/bench/:
 * C fixtures of bench/fixtures/*.c, and of test/fixtures/wasm/*.c the bench shares with the tests
 * (clang --target=wasm32-wasi -O2, like the test harness), and the big Go module of
 * bench/fixtures/big (GOOS=wasip1).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
/** The repository root. */
export const ROOT = resolve(import.meta.dirname, '..', '..');
/** Where bench modules are cached. */
export const BENCH_CACHE = join(ROOT, 'test', '.cache', 'bench');
const FIXTURES = join(ROOT, 'bench', 'fixtures');

function hashOf(files: string[]): string {
  const h = createHash('sha256');
  for (const f of files) h.update(f).update(readFileSync(f));
  return h.digest('hex').slice(0, 16);
}

/** Compiles bench/fixtures/<name>.c (or test/fixtures/wasm/<name>.c, shared with the tests) to Wasm (cached); returns the path. */
export async function buildBenchC(name: string): Promise<string> {
  const own = join(FIXTURES, `${name}.c`);
  const src = existsSync(own) ? own : join(ROOT, 'test', 'fixtures', 'wasm', `${name}.c`);
  const out = join(BENCH_CACHE, `${name}-${hashOf([src])}.wasm`);
  if (existsSync(out)) return out;
  mkdirSync(BENCH_CACHE, { recursive: true });
  const tmp = `${out}.${process.pid}.tmp`;
  await run('clang', ['--target=wasm32-wasi', '-O2', '-o', tmp, src], { timeout: 120_000 });
  renameSync(tmp, out);
  return out;
}

/** Builds bench/fixtures/big with the machine's Go for GOOS=wasip1 GOARCH=wasm (cached); returns the path. */
export async function buildBigGo(): Promise<string> {
  const dir = join(FIXTURES, 'big');
  const srcs = readdirSync(dir)
    .filter((f) => f.endsWith('.go'))
    .sort()
    .map((f) => join(dir, f));
  const out = join(BENCH_CACHE, `big-go-${hashOf(srcs)}.wasm`);
  if (existsSync(out)) return out;
  mkdirSync(BENCH_CACHE, { recursive: true });
  const tmp = `${out}.${process.pid}.tmp`;
  await run('go', ['build', '-trimpath', '-o', tmp, ...srcs], {
    cwd: dir,
    timeout: 600_000,
    env: { ...process.env, GOOS: 'wasip1', GOARCH: 'wasm', GO111MODULE: 'off' },
  });
  renameSync(tmp, out);
  return out;
}

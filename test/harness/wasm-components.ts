/**
 * Builds the WASI 0.2 test components of test/fixtures/components/ (a Cargo
 * workspace; `rustup target add wasm32-wasip2`) and caches them by the hash of
 * the workspace's sources and Cargo.lock in test/.cache/components/. One
 * `cargo build` builds all of them (cargo's own target dir is test/.cache/cargo-target).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The Cargo workspace of the test components. */
export const COMPONENT_FIXTURES_DIR = join(ROOT, 'test', 'fixtures', 'components');
/** Where built components are cached (git-ignored). */
export const COMPONENT_CACHE_DIR = join(ROOT, 'test', '.cache', 'components');
const TARGET_DIR = join(ROOT, 'test', '.cache', 'cargo-target');

/** The test components: crate name → the artifact cargo writes. */
export const COMPONENTS = {
  'hello-http': 'hello_http.wasm',
  'http-state': 'http_state.wasm',
  'cli-read': 'cli-read.wasm',
  'unsupported-import': 'unsupported-import.wasm',
  'http-get': 'http-get.wasm',
  'platform-app': 'platform_app.wasm',
  'platform-cli': 'platform-cli.wasm',
  'platform-draft': 'platform_draft.wasm',
  'sockets-client': 'sockets-client.wasm',
} as const;

/** A test component's name. */
export type ComponentName = keyof typeof COMPONENTS;

let building: Promise<void> | undefined;

function sourceHash(): string {
  const h = createHash('sha256');
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (name === 'target') continue;
      if (statSync(p).isDirectory()) walk(p);
      else h.update(relative(COMPONENT_FIXTURES_DIR, p)).update('\0').update(readFileSync(p)).update('\0');
    }
  };
  walk(COMPONENT_FIXTURES_DIR);
  return h.digest('hex').slice(0, 16);
}

/**
 * Returns the path of the built component `name`
 * (`test/.cache/components/<name>-<hash>.wasm`), building the workspace
 * (`cargo build --release --locked --target wasm32-wasip2`) when it is missing.
 */
export async function buildComponent(name: ComponentName): Promise<string> {
  const hash = sourceHash();
  const out = join(COMPONENT_CACHE_DIR, `${name}-${hash}.wasm`);
  if (existsSync(out)) return out;
  building ??= cargoBuild(hash).finally(() => (building = undefined));
  await building;
  return out;
}

async function cargoBuild(hash: string): Promise<void> {
  try {
    await run('cargo', ['build', '--release', '--locked', '--target', 'wasm32-wasip2', '-j', '1'], {
      cwd: COMPONENT_FIXTURES_DIR,
      env: { ...process.env, CARGO_TARGET_DIR: TARGET_DIR },
      timeout: 600_000,
    });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    if (err.code === 'ENOENT') throw new Error('cargo not found: install Rust (rustup) and `rustup target add wasm32-wasip2`');
    throw new Error(`building the test components failed: ${err.stderr ?? err.message}`);
  }
  mkdirSync(COMPONENT_CACHE_DIR, { recursive: true });
  for (const [name, artifact] of Object.entries(COMPONENTS)) {
    const out = join(COMPONENT_CACHE_DIR, `${name}-${hash}.wasm`);
    const tmp = `${out}.${process.pid}.${Date.now()}.tmp`;
    copyFileSync(join(TARGET_DIR, 'wasm32-wasip2', 'release', artifact), tmp);
    renameSync(tmp, out);
  }
}

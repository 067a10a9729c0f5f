/**
 * Builds the WASI 0.2 test components of test/fixtures/components/ (a Cargo
 * workspace; `rustup target add wasm32-wasip2`) and caches them by the hash of
 * the workspace's sources and Cargo.lock in test/.cache/components/. One
 * `cargo build` builds all of them (cargo's own target dir is test/.cache/cargo-target).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cargoWorkspace } from './cargo-workspace.ts';

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

/**
 * Returns the path of the built component `name`
 * (`test/.cache/components/<name>-<hash>.wasm`), building the workspace
 * (`cargo build --release --locked --target wasm32-wasip2`) when it is missing.
 */
export const buildComponent: (name: ComponentName) => Promise<string> = cargoWorkspace({
  dir: COMPONENT_FIXTURES_DIR,
  targetDir: TARGET_DIR,
  cacheDir: COMPONENT_CACHE_DIR,
  artifacts: COMPONENTS,
  what: 'the test components',
});

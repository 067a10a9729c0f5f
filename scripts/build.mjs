#!/usr/bin/env node
// `npm run build`: compiles nodelet and its packages (core + sockets into dist/,
// plugin-api, providers/wasi and examples/provider-http-probe into their own dist/)
// with `tsc -b` (incremental: a no-op when nothing changed), then copies the
// plain-JavaScript and data files tsc does not emit next to the compiled modules
// that load them by URL. `--if-stale` skips the whole run when every dist is newer
// than every source (what `npm start` and the test harness use).
import { cpSync, existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
/** @type {Array<[string, string, (file: string) => boolean]>} [from, to, file filter]: files tsc does not emit. */
const ASSETS = [
  ['providers/wasi/src/worker', 'providers/wasi/dist/worker', (f) => f.endsWith('.mjs')],
  // The helper programs core/exec/mount-syscalls.ts and core/network/addr-netlink.ts run.
  ['core', 'dist/core', (f) => f.endsWith('.pl')],
];
/** Source trees whose changes make dist stale. */
const SOURCES = ['core', 'sockets', 'plugin-api/v1', 'providers/wasi/src', 'examples/provider-http-probe/src', 'tsconfig.lib.json', 'tsconfig.build.json'];
const OUTPUTS = ['dist/.tsbuildinfo', 'plugin-api/dist/.tsbuildinfo', 'providers/wasi/dist/.tsbuildinfo', 'examples/provider-http-probe/dist/.tsbuildinfo'];

/**
 * The newest modification time under `p` (dist and node_modules left out).
 * @param {string} p
 * @returns {number}
 */
function newest(p) {
  const s = statSync(p);
  if (!s.isDirectory()) return s.mtimeMs;
  let t = s.mtimeMs;
  for (const e of readdirSync(p)) if (e !== 'dist' && e !== 'node_modules') t = Math.max(t, newest(join(p, e)));
  return t;
}

function stale() {
  if (!OUTPUTS.every((o) => existsSync(join(ROOT, o)))) return true;
  const built = Math.min(...OUTPUTS.map((o) => statSync(join(ROOT, o)).mtimeMs));
  return SOURCES.some((s) => newest(join(ROOT, s)) > built);
}

if (process.argv.includes('--if-stale') && !stale()) process.exit(0);
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
try {
  execFileSync(process.execPath, [tsc, '-b', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
} catch {
  process.exit(1);
}
for (const [from, to, keep] of ASSETS) {
  cpSync(join(ROOT, from), join(ROOT, to), { recursive: true, filter: (src) => statSync(src).isDirectory() || keep(src) });
}
// tsc -b leaves a tsbuildinfo untouched when its project is up to date; mark the build time.
const now = new Date();
for (const o of OUTPUTS) utimesSync(join(ROOT, o), now, now);
console.error(`nodelet: built ${OUTPUTS.map((o) => relative(ROOT, dirname(join(ROOT, o)))).join(', ')}`);

#!/usr/bin/env node
// The `nodelet` command: runs the built JavaScript in dist/ (`npm run build`)
// with plain node — no TypeScript loader. On a Node older than 24 it first
// re-runs itself with the bundled Node 24, and on Node 24 it re-executes itself
// (same pid) with nodelet's V8 flags when they are missing (see node-runtime.mjs).
// The agent's start-up runs without V8's optimizing compilers, which main() turns
// on again once the agent has started (holdOptimizingTiers in node-runtime.mjs).
// `nodelet run` takes a shorter way: no V8 flags (they size the long-running
// agent's heap; a re-execution is a second Node start), only the subcommand's own
// modules (dist/core/cli/run-main.js, not the agent's command-line parsing), and
// Node's compile cache for them in the user's cache directory (off with
// NODE_DISABLE_COMPILE_CACHE), so that running a module costs about what plain
// node:wasi costs (bench/README.md, "nodelet run").
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const argv = process.argv.slice(2);
const supported = Number(process.versions.node.split('.')[0]) >= 24;
const lean = supported && argv[0] === 'run';
const entry = new URL(lean ? '../dist/core/cli/run-main.js' : '../dist/core/cli/main.js', import.meta.url);
/** @type {typeof import('./node-runtime.mjs') | undefined} */
const runtime = lean ? undefined : await import('./node-runtime.mjs');
const relaunched = runtime ? await runtime.relaunchOnSupportedNode(fileURLToPath(import.meta.url), argv) : undefined;
if (relaunched !== undefined) {
  process.exitCode = relaunched;
} else if (!existsSync(entry)) {
  process.stderr.write(`nodelet: ${fileURLToPath(entry)} is missing: run "npm run build" first\n`);
  process.exitCode = 1;
} else {
  runtime?.reexecWithV8Flags(fileURLToPath(import.meta.url), argv); // returns when nothing is missing
  if (lean) enableCompileCache();
  process.removeAllListeners('warning');
  process.on('warning', (w) => {
    // node:wasi prints an ExperimentalWarning on every load; everything else is shown.
    if (w.name === 'ExperimentalWarning' && /WASI/.test(w.message)) return;
    console.error(`${w.name}: ${w.message}`);
  });
  const release = runtime?.holdOptimizingTiers();
  const { main } = await import(entry.href);
  process.exitCode = await main(lean ? argv.slice(1) : argv, { started: release });
}

/**
 * Node's compile cache for the modules loaded next, in $XDG_CACHE_HOME/nodelet/js-code
 * (~/.cache/nodelet/js-code), unless NODE_DISABLE_COMPILE_CACHE is set. Makes the directories
 * (0700) itself: the compile cache of Wasm modules (dist/core/cli/compile-cache.js) makes
 * only its own beside js-code.
 */
function enableCompileCache() {
  if (process.env.NODE_DISABLE_COMPILE_CACHE) return;
  const { homedir } = process.getBuiltinModule('node:os');
  const xdg = process.env.XDG_CACHE_HOME;
  const dir = `${xdg && xdg.startsWith('/') ? xdg : `${homedir()}/.cache`}/nodelet/js-code`;
  if (makeDirs(dir)) process.getBuiltinModule('node:module').enableCompileCache?.(dir);
}

/**
 * Makes the absolute path `dir` and its missing parents, one mkdir(2) each; false when one
 * fails. (fs.mkdirSync's recursive mode loops for ever where mkdir(2) answers ENOENT under a
 * parent that exists, as in /proc.)
 * @param {string} dir
 */
function makeDirs(dir) {
  const { mkdirSync } = process.getBuiltinModule('node:fs');
  const missing = [];
  for (let d = dir; !existsSync(d); d = d.slice(0, d.lastIndexOf('/')) || '/') {
    if (d === '/') return false;
    missing.push(d);
  }
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d, { mode: 0o700 });
    } catch (e) {
      if (/** @type {NodeJS.ErrnoException} */ (e).code !== 'EEXIST') return false;
    }
  }
  return true;
}

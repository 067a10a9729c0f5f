#!/usr/bin/env node
// The `nodelet` command: runs the built JavaScript in dist/ (`npm run build`)
// with plain node — no TypeScript loader. On a Node older than 24 it first
// re-runs itself with the bundled Node 24, and on Node 24 it re-executes itself
// (same pid) with nodelet's V8 flags when they are missing (see node-runtime.mjs).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { reexecWithV8Flags, relaunchOnSupportedNode } from './node-runtime.mjs';

const relaunched = await relaunchOnSupportedNode(fileURLToPath(import.meta.url), process.argv.slice(2));
const entry = new URL('../dist/core/cli/main.js', import.meta.url);
if (relaunched !== undefined) {
  process.exitCode = relaunched;
} else if (!existsSync(entry)) {
  process.stderr.write(`nodelet: ${fileURLToPath(entry)} is missing: run "npm run build" first\n`);
  process.exitCode = 1;
} else {
  reexecWithV8Flags(fileURLToPath(import.meta.url), process.argv.slice(2)); // returns when nothing is missing
  process.removeAllListeners('warning');
  process.on('warning', (w) => {
    // node:wasi prints an ExperimentalWarning on every load; everything else is shown.
    if (w.name === 'ExperimentalWarning' && /WASI/.test(w.message)) return;
    console.error(`${w.name}: ${w.message}`);
  });
  const { main } = await import(entry.href);
  process.exitCode = await main(process.argv.slice(2));
}

#!/usr/bin/env node
// The `nodelet` command. On a Node older than 24 it re-runs itself with the
// bundled Node 24 (see node-runtime.mjs); then it runs the TypeScript sources through tsx.
import { fileURLToPath } from 'node:url';
import { relaunchOnSupportedNode } from './node-runtime.mjs';

const relaunched = await relaunchOnSupportedNode(fileURLToPath(import.meta.url), process.argv.slice(2));
if (relaunched !== undefined) {
  process.exitCode = relaunched;
} else {
  process.removeAllListeners('warning');
  process.on('warning', (w) => {
    // node:wasi prints an ExperimentalWarning on every load; everything else is shown.
    if (w.name === 'ExperimentalWarning' && /WASI/.test(w.message)) return;
    console.error(`${w.name}: ${w.message}`);
  });
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('../core/cli/main.ts');
  process.exitCode = await main(process.argv.slice(2));
}

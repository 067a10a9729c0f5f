#!/usr/bin/env node
// The `nodelet` command: runs the TypeScript sources through tsx (no build step).
import { register } from 'tsx/esm/api';

process.removeAllListeners('warning');
process.on('warning', (w) => {
  // node:wasi prints an ExperimentalWarning on every load; everything else is shown.
  if (w.name === 'ExperimentalWarning' && /WASI/.test(w.message)) return;
  console.error(`${w.name}: ${w.message}`);
});
register();
const { main } = await import('../core/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));

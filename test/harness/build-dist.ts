/**
 * Builds nodelet's dist/ (scripts/build.mjs --if-stale) before tests or the
 * bench spawn the `nodelet` command, which runs the built JavaScript.
 * A no-op when every dist/ is newer than its sources.
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { nodeBinary } from './node-binary.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');

/** Runs the build when dist/ is stale; throws (with tsc's output on stderr) when it fails. */
export function ensureBuilt(): void {
  execFileSync(nodeBinary(), [resolve(ROOT, 'scripts', 'build.mjs'), '--if-stale'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
}

/** A vitest global setup: the build, once per run. */
export default function setup(): void {
  ensureBuilt();
}

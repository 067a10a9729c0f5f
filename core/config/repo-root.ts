/** Where nodelet's own files live: the one place that knows the repository layout. */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Absolute path of the nodelet repository (or installed package): the nearest
 * directory above this module with nodelet's package.json. This file runs as
 * `<repo>/core/config/repo-root.ts` (tests, dev scripts) and as
 * `<repo>/dist/core/config/repo-root.js` (the built entry).
 */
export const REPO_ROOT: string = findRoot(path.dirname(fileURLToPath(import.meta.url)));

function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'nodelet') return dir;
    // A bare Error on purpose: thrown at module load when nodelet is installed without its package.json, before any catalogue user exists.
    if (path.dirname(dir) === dir) throw new Error(`nodelet's package.json not found above ${from}`);
  }
}

/** The upstream kubelet minor version nodelet follows. */
export const KUBELET_COMPATIBLE_VERSION = 'v1.36';

let version: string | undefined;

/** nodelet's version from `<repo>/package.json`. */
export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  return version;
}

/** Where nodelet's own files live: the one place that knows the repository layout. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Absolute path of the nodelet repository (this file is `<repo>/core/config/repo-root.ts`). */
export const REPO_ROOT: string = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The upstream kubelet minor version nodelet follows. */
export const KUBELET_COMPATIBLE_VERSION = 'v1.36';

let version: string | undefined;

/** nodelet's version from `<repo>/package.json`. */
export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  return version;
}

/**
 * Resolves a provider's entry inside its package directory. Both the written
 * path and the real path (symlinks followed) must stay inside the package's
 * real directory; anything else is refused with NDL_PROVIDER_ENTRY_OUTSIDE.
 */
import { existsSync, realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { nodeletError } from '../errors/index.ts';
import type { ProviderManifest } from './manifest.ts';

const inside = (root: string, p: string) => {
  const rel = relative(root, p);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
};

/** The entry's real absolute path; throws NDL_PROVIDER_ENTRY_OUTSIDE or NDL_PROVIDER_IMPORT (missing file). */
export function resolveEntry(m: ProviderManifest): string {
  const outside = () => nodeletError('NDL_PROVIDER_ENTRY_OUTSIDE', `${m.packageName}: entry "${m.entry}" resolves outside ${m.dir}`);
  if (isAbsolute(m.entry)) throw outside();
  const root = realpathSync(m.dir);
  const written = resolve(root, m.entry);
  if (!inside(root, written)) throw outside();
  if (!existsSync(written)) throw nodeletError('NDL_PROVIDER_IMPORT', `${m.packageName}: entry "${m.entry}" does not exist`);
  const real = realpathSync(written);
  if (!inside(root, real)) throw outside();
  return real;
}

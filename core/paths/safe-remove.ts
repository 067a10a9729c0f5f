/**
 * Removing files and trees that nodelet wrote, without ever following a
 * symlink (the fix of CVE-2017-1002102: the secret/configMap writer must
 * not delete host files through a link planted in the volume).
 */
import { lstat, rm, rmdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { resolveInRoot, validateRelativePath } from './safe-join.ts';

function isMissing(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * Removes the file `rel` below `root`. Intermediate directories must be real
 * directories (a symlinked parent is refused with `NDL_PATH_ESCAPE`); the
 * last component is unlinked, so a symlink there is removed itself, never its
 * target. A directory at `rel` is left alone (returns false). Missing is fine.
 */
export async function removeFileNoFollow(root: string, owner: string, rel: string): Promise<boolean> {
  const clean = validateRelativePath(owner, rel);
  const dir = path.posix.dirname(clean);
  let parent: string;
  try {
    parent = dir === '.' ? path.resolve(root) : await resolveInRoot(root, owner, dir, { noSymlinks: true });
  } catch (e) {
    if (isMissing(e)) return false;
    throw e;
  }
  const target = path.join(parent, path.posix.basename(clean));
  try {
    const st = await lstat(target);
    if (st.isDirectory()) return false;
    await unlink(target);
    return true;
  } catch (e) {
    if (isMissing(e)) return false;
    throw e;
  }
}

/**
 * Removes the now-empty directories on the way from `rel`'s parent up to
 * (not including) `root`; stops at the first one that is not empty.
 */
export async function pruneEmptyParents(root: string, rel: string): Promise<void> {
  let dir = path.posix.dirname(rel);
  while (dir !== '.' && dir !== '/' && dir !== '') {
    const full = path.join(root, dir);
    try {
      const st = await lstat(full);
      if (!st.isDirectory()) return;
      await rmdir(full);
    } catch {
      return; // not empty, gone, or not ours: stop here
    }
    dir = path.posix.dirname(dir);
  }
}

/**
 * Removes a whole tree. A symlink at `target` or anywhere inside is removed
 * as a link; its target is never entered (Node's `rm` works with `lstat`).
 */
export async function removeTreeNoFollow(target: string): Promise<void> {
  await rm(target, { recursive: true, force: true, maxRetries: 2 });
}

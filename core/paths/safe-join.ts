/**
 * Joining user-controlled relative paths (`items[].path`, `subPath`,
 * downward API paths, volume names) under a root without ever leaving it.
 *
 * Two layers, like upstream:
 *  - lexical checks (pkg/apis/core/validation `validateLocalDescendingPath`,
 *    atomic_writer `validatePath`): not empty, relative, no `..` component,
 *    length limits;
 *  - on-disk checks for `subPath` (the fixes of CVE-2017-1002101 and
 *    CVE-2021-25741): walk the path component by component with `lstat`,
 *    resolve every symlink met and refuse the path as soon as it resolves
 *    outside the root's real path. Missing components can be created on the
 *    way (`SafeMakeDir`), never through a symlink that leaves the root.
 *
 * Errors are `NDL_PATH_ESCAPE` with details like `<volume>: path "<p>" must
 * not contain '..'`. Messages about on-disk escapes do not reveal link
 * targets (upstream hides host-filesystem details from users too).
 */
import { lstat, mkdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { nodeletError, type NodeletError } from '../errors/index.ts';

/** Upstream atomic_writer limits. */
const MAX_PATH_LENGTH = 4096;
const MAX_FILE_NAME_LENGTH = 255;

/** Options of {@link validateRelativePath}. */
export interface RelativePathOptions {
  /** What the path is called in messages (`path`, `subPath`, ...). Default `path`. */
  readonly what?: string;
  /** Refuse a first component starting with `..` (like `..data`), as upstream does for `items[].path`. */
  readonly forbidDotDotPrefix?: boolean;
  /** Accept a path that normalises to `.` (the root itself), e.g. `subPath: "."`. */
  readonly allowRoot?: boolean;
}

function escape(owner: string, what: string, p: string, why: string): NodeletError {
  return nodeletError('NDL_PATH_ESCAPE', `${owner}: ${what} ${JSON.stringify(p)} ${why}`);
}

/**
 * Checks a user-supplied relative path lexically and returns it normalised
 * (POSIX separators, no `.` or empty components). `owner` names the volume
 * (or mount) in error messages. Throws `NDL_PATH_ESCAPE`.
 */
export function validateRelativePath(owner: string, p: string, opts: RelativePathOptions = {}): string {
  const what = opts.what ?? 'path';
  if (p === '') throw escape(owner, what, p, 'must not be empty');
  if (p.includes('\0')) throw escape(owner, what, p, 'must not contain NUL bytes');
  if (path.posix.isAbsolute(p)) throw escape(owner, what, p, 'must be a relative path');
  if (p.length > MAX_PATH_LENGTH) throw escape(owner, what, p, `must be less than or equal to ${MAX_PATH_LENGTH} characters`);
  const parts = p.split('/');
  if (parts.includes('..')) throw escape(owner, what, p, "must not contain '..'");
  if (parts.some((c) => c.length > MAX_FILE_NAME_LENGTH)) {
    throw escape(owner, what, p, `filenames must be less than or equal to ${MAX_FILE_NAME_LENGTH} characters`);
  }
  if (opts.forbidDotDotPrefix && parts[0]!.startsWith('..')) throw escape(owner, what, p, "must not start with '..'");
  const clean = path.posix.normalize(p).replace(/\/+$/, '');
  if (clean === '.' || clean === '') {
    if (opts.allowRoot) return '.';
    throw escape(owner, what, p, 'must name a file below the root');
  }
  return clean;
}

/** Checks one path component (a volume name, a plugin dir): no `/`, not `.`/`..`. */
export function validateName(owner: string, name: string, what = 'name'): string {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
    throw escape(owner, what, name, 'must be a single path component');
  }
  if (name.length > MAX_FILE_NAME_LENGTH) {
    throw escape(owner, what, name, `must be less than or equal to ${MAX_FILE_NAME_LENGTH} characters`);
  }
  return name;
}

/**
 * Lexical join: validates `rel` with {@link validateRelativePath} and joins
 * it under `root`. Does not look at the disk (use {@link resolveInRoot} when
 * the tree may contain symlinks someone else wrote).
 */
export function safeJoin(root: string, owner: string, rel: string, opts: RelativePathOptions = {}): string {
  const clean = validateRelativePath(owner, rel, opts);
  return clean === '.' ? path.resolve(root) : path.join(path.resolve(root), clean);
}

/** True when `p` is `root` or below it (both absolute and normalised). */
export function isWithin(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (!rel.startsWith('..' + path.sep) && rel !== '..' && !path.isAbsolute(rel));
}

/** Options of {@link resolveInRoot}. */
export interface ResolveOptions extends RelativePathOptions {
  /** Create missing directories with this mode (upstream `SafeMakeDir`). */
  readonly createMode?: number;
  /** Refuse every symlink, even one that stays inside the root (for nodelet's own writers). */
  readonly noSymlinks?: boolean;
}

const MAX_SYMLINKS = 40;

/**
 * Resolves `rel` under `root` on disk and returns its real path, which is
 * guaranteed to be inside `realpath(root)`. Walks component by component:
 * each component is `lstat`ed; a symlink is resolved with `realpath` and
 * checked at once, so nothing outside the root is ever created or entered.
 * Throws `NDL_PATH_ESCAPE` for an escape, `ENOENT`-style errors otherwise.
 */
export async function resolveInRoot(root: string, owner: string, rel: string, opts: ResolveOptions = {}): Promise<string> {
  const what = opts.what ?? 'path';
  const clean = validateRelativePath(owner, rel, opts);
  const realRoot = await realpath(root);
  if (clean === '.') return realRoot;
  const parts = clean.split('/');
  let current = realRoot;
  let links = 0;
  for (let i = 0; i < parts.length; i++) {
    const next = path.join(current, parts[i]!);
    const st = await lstat(next).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT' && opts.createMode !== undefined) return undefined;
      throw e;
    });
    if (st === undefined) {
      await mkdir(next, { mode: opts.createMode }).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== 'EEXIST') throw e;
      });
      // Re-check: something may have raced us into place.
      const again = await lstat(next);
      if (!again.isDirectory() || again.isSymbolicLink()) throw escape(owner, what, rel, 'resolves outside the volume');
      current = next;
      continue;
    }
    if (st.isSymbolicLink()) {
      if (opts.noSymlinks) throw escape(owner, what, rel, 'must not pass through a symlink');
      if (++links > MAX_SYMLINKS) throw escape(owner, what, rel, 'has too many levels of symbolic links');
      let target: string;
      try {
        target = await realpath(next);
      } catch {
        throw escape(owner, what, rel, 'contains a dangling symlink');
      }
      if (!isWithin(realRoot, target)) throw escape(owner, what, rel, 'resolves outside the volume');
      current = target;
      continue;
    }
    if (i < parts.length - 1 && !st.isDirectory()) {
      throw escape(owner, what, rel, `has a non-directory component ${JSON.stringify(parts.slice(0, i + 1).join('/'))}`);
    }
    current = next;
  }
  if (!isWithin(realRoot, current)) throw escape(owner, what, rel, 'resolves outside the volume');
  return current;
}

/**
 * Paths inside an image volume's tree as its unpacker reads them: tar entry
 * names cleaned like a layer extraction (nothing may climb above the root), and
 * symlink targets read as if the volume were the root filesystem, then written
 * relative to the link so that they resolve inside the volume on the host too.
 */
import path from 'node:path';

/** `./a/b`, `/a/b` and `a/b/` all name `a/b`; `a/x/../b` names `a/b`. Undefined when `..` climbs above the root. */
export function cleanEntryName(name: string): string | undefined {
  const out: string[] = [];
  for (const c of name.split('/')) {
    if (c === '' || c === '.') continue;
    if (c === '..') {
      if (out.length === 0) return undefined;
      out.pop();
    } else out.push(c);
  }
  return out.join('/');
}

/** The root-relative path `target` names from directory `dir` when the volume is the root (absolute = from the root, `..` stops at it). */
export function resolveInVolume(dir: string, target: string): string {
  const out = target.startsWith('/') || dir === '' ? [] : dir.split('/');
  for (const c of target.split('/')) {
    if (c === '' || c === '.') continue;
    if (c === '..') out.pop();
    else out.push(c);
  }
  return out.join('/');
}

/** The target a symlink at `linkPath` gets for `target`: the same place in the volume, written relative to the link's directory. */
export function confinedLinkTarget(linkPath: string, target: string): string {
  const dir = path.posix.dirname(linkPath) === '.' ? '' : path.posix.dirname(linkPath);
  const rel = path.posix.relative(`/${dir}`, `/${resolveInVolume(dir, target)}`);
  return rel === '' ? '.' : rel;
}

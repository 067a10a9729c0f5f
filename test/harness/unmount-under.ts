/**
 * Unmounts every mount below a directory (deepest first), so that a stopped
 * nodelet's root dir can be removed: nodelet mounts a tmpfs on each secret,
 * projected and Memory emptyDir volume when it runs as root, and keeps those
 * mounts when it stops (as upstream's kubelet does across restarts).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { sep } from 'node:path';

/** Mount points at or below `root` (from /proc/self/mountinfo, octal escapes decoded). */
export function mountsUnder(root: string): string[] {
  let r: string;
  try {
    r = realpathSync(root);
  } catch {
    return [];
  }
  const points = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((p): p is string => p !== undefined)
    .map((p) => p.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))));
  return points.filter((p) => p === r || p.startsWith(r + sep));
}

/** Unmounts every mount at or below `root`, deepest first; failures are ignored (the removal then reports them). */
export function unmountUnder(root: string): void {
  for (const p of mountsUnder(root).sort((a, b) => b.length - a.length)) {
    try {
      execFileSync('umount', [p], { stdio: 'ignore' });
    } catch {
      // left for the caller's removal to report
    }
  }
}

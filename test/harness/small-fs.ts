/**
 * A small filesystem of its own (a tmpfs), for tests of what code does when its disk is full:
 * mounted on a fresh directory, filled to the last block, freed again. Mounting needs root
 * (CAP_SYS_ADMIN): tests using it are skipped otherwise ({@link canMountSmallFs}).
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** True when this process may mount a tmpfs. */
export const canMountSmallFs = process.getuid?.() === 0;

/** Bytes free on the filesystem holding `path` (what an unprivileged writer may still use). */
export function freeBytes(path: string): number {
  const s = statfsSync(path);
  return s.bavail * s.bsize;
}

/** Appends zeros to `file` until the filesystem refuses (ENOSPC) or `bytes` were written. */
export function fillUp(file: string, bytes = Infinity): void {
  const fd = openSync(file, 'a');
  const buf = Buffer.alloc(64 * 1024);
  let written = 0;
  try {
    while (written < bytes) written += writeSync(fd, buf, 0, Math.min(buf.length, bytes - written));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  } finally {
    closeSync(fd);
  }
}

/** A tmpfs of `bytes` mounted on a fresh directory. */
export interface SmallFs {
  readonly dir: string;
  /** Fills it with `<dir>/.filler` until nothing is left. */
  fill(): void;
  /** Removes the filler. */
  free(): void;
  /** Unmounts it (lazily: a file a failed test left open does not keep it) and removes the directory. */
  cleanup(): void;
}

/** Mounts a tmpfs of `bytes` (rounded up to pages by the kernel) on a fresh directory. */
export function mountSmallFs(bytes: number, prefix = 'nodelet-small-fs-'): SmallFs {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes},mode=0755`, 'tmpfs', dir]);
  const filler = join(dir, '.filler');
  return {
    dir,
    fill: () => fillUp(filler),
    free: () => rmSync(filler, { force: true }),
    cleanup() {
      execFileSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

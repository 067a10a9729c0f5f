/**
 * Replacing a state file whole (a checkpoint, a kubeconfig, a key): the new content goes to a
 * temporary file beside it, which is then renamed over it. A crash, or a disk that fills up
 * half-way, leaves the old file or the new one, never a part of either; when a step fails the
 * temporary file is removed (a half-written copy would be one more file to clean up, and it
 * takes space on a disk that has none). The temporary name is unique per process and per call,
 * so two replacements of one file in flight do not write into each other's copy.
 *
 *   write <file>.tmp-<pid>-<n> ──► rename over <file>
 *        └──(fails: ENOSPC, EIO, ...)──► remove the temporary file, throw
 */
import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';

let seq = 0;

const tmpName = (file: string): string => `${file}.tmp-${process.pid}-${(seq++).toString(36)}`;

/** Replaces `file` with `data` (created with `mode`; the umask applies); see the module comment. */
export async function replaceFile(file: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  const tmp = tmpName(file);
  try {
    const fh = await open(tmp, 'w', mode);
    try {
      await fh.writeFile(data);
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw e;
  }
}

/** {@link replaceFile}, synchronously. */
export function replaceFileSync(file: string, data: string | Uint8Array, mode = 0o600): void {
  const tmp = tmpName(file);
  try {
    const fd = openSync(tmp, 'w', mode);
    try {
      const buf = typeof data === 'string' ? Buffer.from(data) : data;
      for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (e) {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // the error that matters is the write's
    }
    throw e;
  }
}

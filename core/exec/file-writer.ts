/**
 * Small files replaced whole, off nodelet's main thread, in one round trip. A pod's IP
 * record (`core/network/ip-allocator.ts`) is written to a temporary name and renamed:
 * through libuv's pool that is four pooled requests (open, write, close, rename), each
 * waiting for a pool thread and then for a turn of the event loop. Under a 100-pod burst
 * the record was the last step before a pod's start for most pods: 209 ms at p50 from
 * admission to the record on disk (bench/results/, "The IP record and the mounts' real paths off the pool").
 *
 * So where the Perl helper of `mount-syscalls.ts` runs, the write and the rename are its
 * `write-file` command, answered once; else (no `perl`, another CPU) they go through
 * libuv's pool as before. Hand-written: no npm package writes a file in one hop off the
 * main thread.
 */
import { rename, rm, writeFile } from 'node:fs/promises';
import { nodeletError, type ErrorCode } from '../errors/index.ts';
import { helperErrno } from './helper-errno.ts';
import type { HelperShell } from './helper-shell.ts';

/** Replaces small files whole. */
export interface FileWriter {
  /**
   * Writes `data` to `<file>.tmp` (created with `mode`; the umask applies) and renames it
   * over `file`: a crash leaves the old file or the new one. Rejects with the writer's error
   * code, the errno's name as `errnoCode` and the path that failed as `path`; the temporary
   * file is gone then.
   */
  replace(file: string, data: string, mode: number): Promise<void>;
}

/**
 * A {@link FileWriter} through `helper` (a helper shell running the `mount-syscalls.ts`
 * program, which knows `write-file`), or through libuv's pool when there is none. Its
 * failures are `errorCode` errors (the caller's subsystem).
 */
export function fileWriter(helper: HelperShell | undefined, errorCode: ErrorCode): FileWriter {
  const fail = (path: string, errnoCode: string, message: string, cause: unknown) =>
    Object.assign(nodeletError(errorCode, message, cause), { errnoCode, path });
  if (!helper)
    return {
      async replace(file, data, mode) {
        const tmp = `${file}.tmp`;
        try {
          await writeFile(tmp, data, { mode });
          await rename(tmp, file);
        } catch (e) {
          await rm(tmp, { force: true }).catch(() => undefined);
          const err = e as NodeJS.ErrnoException;
          throw fail(err.path ?? file, err.code ?? 'EIO', err.message, e);
        }
      },
    };
  return {
    async replace(file, data, mode) {
      try {
        await helper('write-file', [mode.toString(8), file, data]);
      } catch (e) {
        const f = helperErrno(e, 'write-file');
        throw f ? fail(f.path, f.errnoCode, `${f.errnoCode}: ${f.strerror}, write '${f.path}'`, e) : e;
      }
    },
  };
}

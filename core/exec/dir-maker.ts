/**
 * Directories made off nodelet's main thread in one round trip per call. A pod's start
 * makes a few: its dir, a log dir per container, a mount point per memory-backed volume.
 * Through libuv's pool, `fs.promises.mkdir(dir, { recursive: true })` is one pooled mkdir
 * per level (more when levels are missing: the deepest is tried first), and each waits for
 * a pool thread and then a turn of the event loop; under a 100-pod burst a turn is long,
 * and the pod and log dirs took 117 ms at p50, a volume's mount point 175 ms
 * (bench/README.md, "Pod IPs without a fork"). Made with direct calls on the main thread they
 * took ~1 ms, but a call there waits for the disk (a journal commit, a cold block) with
 * every pod, probe and heartbeat of the node behind it.
 *
 * So where the Perl helper of `mount-syscalls.ts` runs, every dir of one call goes to it
 * as one `mkdirs` line, made there by mkdir(2) one after another, and answered once. Else
 * (no `perl`, another CPU) the dirs go through libuv's pool as before. Hand-written: no npm
 * package makes a batch of directories in one hop off the main thread.
 */
import { mkdir } from 'node:fs/promises';
import { nodeletError } from '../errors/index.ts';
import { helperErrno } from './helper-errno.ts';
import type { HelperShell } from './helper-shell.ts';

/** Makes directories (every missing level, like `mkdir -p`). */
export interface DirMaker {
  /**
   * Makes each of `dirs` with every missing level, with `mode` (the umask applies). Resolves,
   * per dir, to the first level made, or undefined when it was there (Node's
   * `mkdir(dir, { recursive: true })`). Rejects with `NDL_POD_DIRS` naming the level that
   * could not be made and its errno (`errnoCode`: `ENOTDIR`, `EACCES`, …).
   */
  make(dirs: readonly string[], mode: number): Promise<(string | undefined)[]>;
}

/**
 * A {@link DirMaker} through `helper` (a helper shell running the `mount-syscalls.ts`
 * program, which knows `mkdirs`), or through libuv's pool when there is none.
 */
export function dirMaker(helper: HelperShell | undefined): DirMaker {
  if (!helper)
    return {
      async make(dirs, mode) {
        // Every mkdir settles before a failure is reported: nothing is still being made once the call rejects.
        const results = await Promise.allSettled(dirs.map((d) => mkdir(d, { recursive: true, mode })));
        const made: (string | undefined)[] = [];
        for (const r of results) {
          if (r.status === 'rejected') {
            const e = r.reason as NodeJS.ErrnoException;
            throw podDirsError(e.path ?? dirs.join(', '), e.code ?? 'EIO', e.message, e);
          }
          made.push(r.value);
        }
        return made;
      },
    };
  return {
    async make(dirs, mode) {
      if (dirs.length === 0) return [];
      let out: string;
      try {
        out = await helper('mkdirs', [mode.toString(8), ...dirs]);
      } catch (e) {
        throw failure(e);
      }
      const made = out.split(' ').map((h) => (h === '-' ? undefined : Buffer.from(h, 'hex').toString('utf8')));
      if (made.length !== dirs.length)
        throw podDirsError(dirs.join(', '), 'EIO', `the helper answered ${JSON.stringify(out)} for ${dirs.length} dirs`, undefined);
      return made;
    },
  };
}

/** The helper's `mkdirs: <path>: <errno> <strerror>` as NDL_POD_DIRS (any other failure of the helper as it came). */
function failure(e: unknown): unknown {
  const f = helperErrno(e, 'mkdirs');
  return f ? podDirsError(f.path, f.errnoCode, `${f.errnoCode}: ${f.strerror}, mkdir '${f.path}'`, e) : e;
}

/** NDL_POD_DIRS with fs's wording (`ENOTDIR: not a directory, mkdir '<path>'`), the errno name and the path. */
function podDirsError(path: string, errnoCode: string, message: string, cause: unknown): Error {
  return Object.assign(nodeletError('NDL_POD_DIRS', message, cause), { errnoCode, path });
}

/**
 * The `wasi_snapshot_preview1` import namespace as node:wasi gives it and as
 * the worker's wrappers (wasi-imports.mjs, wasi-sockets.mjs, suspending-poll.mjs,
 * jspi.mjs) edit it in place, one wrapper over another. Types only (the workers
 * import them with JSDoc `@import`).
 *
 * An i32 argument arrives as a number, an i64 one as a bigint; every function
 * answers an errno — or, once made suspending (JSPI), a promise of one.
 */

/** A WASI preview1 argument: i32 (number) or i64 (bigint). */
export type WasiArg = number | bigint;

/** An errno, at once or (a suspending import) later. */
export type Answer = number | Promise<number>;

/** The namespace: the functions wrappers edit by name, with their signatures; the others, untyped, by name (a wrapper that forwards every argument takes them as `WasiArg[]`). */
export interface Preview1 {
  fd_write(fd: number, iovs: number, iovsLen: number, nwrittenPtr: number): Answer;
  fd_read(fd: number, iovs: number, iovsLen: number, nreadPtr: number): Answer;
  fd_close(fd: number): Answer;
  fd_renumber(from: number, to: number): Answer;
  fd_readdir(fd: number, buf: number, bufLen: number, cookie: bigint, bufusedPtr: number): Answer;
  path_open(
    dirfd: number,
    dirflags: number,
    path: number,
    pathLen: number,
    oflags: number,
    rightsBase: bigint,
    rightsInheriting: bigint,
    fdflags: number,
    fdPtr: number,
  ): Answer;
  poll_oneoff(inPtr: number, outPtr: number, nsubs: number, neventsPtr: number): Answer;
  fd_fdstat_get(fd: number, statPtr: number): Answer;
  fd_fdstat_set_flags(fd: number, flags: number): Answer;
  fd_filestat_get(fd: number, statPtr: number): Answer;
  fd_filestat_set_times(fd: number, atim: bigint, mtim: bigint, fstflags: number): Answer;
  fd_prestat_get(fd: number, prestatPtr: number): Answer;
  fd_prestat_dir_name(fd: number, path: number, pathLen: number): Answer;
  fd_tell(fd: number, offsetPtr: number): Answer;
  path_filestat_set_times(fd: number, lookupflags: number, path: number, pathLen: number, atim: bigint, mtim: bigint, fstflags: number): Answer;
  path_readlink(fd: number, path: number, pathLen: number, buf: number, bufLen: number, bufusedPtr: number): Answer;
  path_symlink(oldPath: number, oldPathLen: number, fd: number, newPath: number, newPathLen: number): Answer;
  sock_shutdown(fd: number, how: number): Answer;
  proc_exit(code: number): void;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- the other preview1 functions, reached by name
  [name: string]: Function;
}

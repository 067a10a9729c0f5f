// Wrappers around node:wasi's preview1 imports, run inside the container's worker.
// Plain JavaScript: workers start without a TypeScript loader (see README.md);
// typed with JSDoc (the import namespace: preview1.ts).
//
//  - stdio capture: fd_write on fds 1 and 2 goes to the CRI log writer.
//  - read-only mounts: writes under a read-only preopen fail with EROFS.
//  - path confinement: a path (symlinks included) must resolve inside its mount,
//    checked at every call against the mount's directory identified at the start
//    (identifyMounts), so renaming things in a volume later leads nowhere outside.
//  - descriptor budget (trackDescriptors): EMFILE per container, ENFILE per node.
//  - interruptible sleep: clock-only poll_oneoff waits on a shared Int32Array,
//    so stop() can wake a sleeping module (a blocking uvwasi sleep cannot be
//    interrupted by worker.terminate()).

/** @import { Preview1, WasiArg } from './preview1.ts' */
import { WAKE } from './memory-limit.mjs';

/** WASI preview1 errno values used here. */
export const ERRNO = /** @type {const} */ ({ SUCCESS: 0, BADF: 8, FAULT: 21, INVAL: 28, LOOP: 32, MFILE: 33, NFILE: 41, NOENT: 44, NOTCAPABLE: 76, ROFS: 69 });

/**
 * A mount as confinePaths sees it: its preopen descriptor, its host directory and that
 * directory's identity; `reported` once its replacement was reported.
 * @typedef {{ fd: number, hostPath: string, dev?: bigint, ino?: bigint, name?: string, containerPath?: string, reported?: boolean }} ConfinedMount
 */

const OFLAGS_CREAT = 1;
const OFLAGS_TRUNC = 8;
const right = (/** @type {number} */ bit) => 1n << BigInt(bit);
// Rights that would let a descriptor change what it refers to.
const WRITE_DATA = right(6) | right(8) | right(22); // fd_write, fd_allocate, fd_filestat_set_size
const MUTATING =
  WRITE_DATA | right(0) | right(9) | right(10) | right(12) | right(16) | right(17) | right(19) | right(20) | right(23) | right(24) | right(25) | right(26);

/** Least time between two warnings that a container's log cannot be written (a disk that fills and frees again and again). */
export const LOG_WARNING_INTERVAL_MS = 60_000;

/** The reason of the pod's Warning event when its container's log cannot be written. */
export const LOG_FAILED_REASON = 'FailedLogWrite';

/**
 * Writes a container's output to its log, dropping what the log refuses (a full disk): the
 * container goes on as if it had been written, as containerd drops output it cannot write.
 * A refusal of the filesystem (an errno: ENOSPC, EIO, ...) is reported through `warn` with the
 * reason {@link LOG_FAILED_REASON}, which makes it a Warning event on the pod too (a log of
 * the node on that full disk would lose it), at most once a minute; the first write that
 * succeeds after a reported refusal is reported as well, with the bytes dropped. A module
 * writing without pause to a full disk costs a failed write(2) per call, and no more than two
 * messages a minute. Output refused because the log is closed (the container is ending) is
 * dropped without a word.
 *
 *   writing ──refused──► dropping: reported, unless a report is < 1 min old (then at the
 *      ▲                     │       first refusal after that minute)
 *      └──written again──────┘ reported when the refusal was: "N bytes of output were dropped"
 *                              (every byte dropped since the last such report)
 *
 * @param {{ write(stream: 'stdout' | 'stderr', chunk: Uint8Array): void }} log a CriLogWriter
 * @param {(message: string, reason?: string) => void} warn
 * @param {() => number} [now] clock in ms (tests)
 * @returns {(stream: 'stdout' | 'stderr', chunk: Uint8Array) => void}
 */
export function droppingLogWriter(log, warn, now = Date.now) {
  let reported = false;
  let dropped = 0;
  let reportedAt = -Infinity;
  return (stream, chunk) => {
    try {
      log.write(stream, chunk);
    } catch (e) {
      if (typeof (/** @type {NodeJS.ErrnoException} */ (e).code) !== 'string') return; // closed
      dropped += chunk.length;
      if (!reported && now() - reportedAt >= LOG_WARNING_INTERVAL_MS) {
        reported = true;
        reportedAt = now();
        const detail = e instanceof Error ? e.message : String(e);
        warn(`cannot write the container's log: ${detail}; its output is dropped until the log takes writes again`, LOG_FAILED_REASON);
      }
      return;
    }
    if (!reported) return;
    warn(`the container's log takes writes again; ${dropped} bytes of output were dropped`);
    reported = false;
    dropped = 0;
  };
}

/**
 * Captures output written to fds 1 and 2 into `log` (a CriLogWriter), through
 * {@link droppingLogWriter}. Closing or renumbering over those fds stops the
 * capture for them.
 * @param {Preview1} w the wasi_snapshot_preview1 import object (edited in place)
 * @param {() => WebAssembly.Memory} mem
 * @param {{ write(stream: 'stdout' | 'stderr', chunk: Uint8Array): void }} log
 * @param {(message: string, reason?: string) => void} warn when the log refuses output, and when it takes it again
 */
export function captureStdio(w, mem, log, warn) {
  /** @type {Map<number, 'stdout' | 'stderr'>} */
  const captured = new Map([
    [1, 'stdout'],
    [2, 'stderr'],
  ]);
  const fdWrite = w.fd_write;
  const write = droppingLogWriter(log, warn);
  w.fd_write = (fd, iovs, iovsLen, nwrittenPtr) => {
    const stream = captured.get(fd);
    if (stream === undefined) return fdWrite(fd, iovs, iovsLen, nwrittenPtr);
    const buf = mem().buffer;
    const dv = new DataView(buf);
    const u8 = new Uint8Array(buf);
    /** @type {Uint8Array[]} */
    const chunks = [];
    let total = 0;
    try {
      for (let i = 0; i < iovsLen; i++) {
        const ptr = dv.getUint32(iovs + 8 * i, true);
        const len = dv.getUint32(iovs + 8 * i + 4, true);
        if (ptr + len > u8.length) return ERRNO.FAULT;
        if (len > 0) chunks.push(u8.subarray(ptr, ptr + len));
        total += len;
      }
      dv.setUint32(nwrittenPtr, total, true);
    } catch {
      return ERRNO.FAULT;
    }
    if (total > 0) write(stream, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total));
    return ERRNO.SUCCESS;
  };
  const fdClose = w.fd_close;
  w.fd_close = (fd) => {
    if (captured.delete(fd)) return ERRNO.SUCCESS;
    return fdClose(fd);
  };
  const fdRenumber = w.fd_renumber;
  w.fd_renumber = (from, to) => {
    const rc = fdRenumber(from, to);
    if (rc === ERRNO.SUCCESS) captured.delete(to);
    return rc;
  };
}

/**
 * Makes the preopens at `readOnlyFds` (and every descriptor opened beneath
 * them) read-only: operations that would modify files fail with EROFS, and
 * descriptors opened under them lose their write rights.
 * @param {Preview1} w the wasi_snapshot_preview1 import object (edited in place)
 * @param {() => WebAssembly.Memory} mem
 * @param {Iterable<number>} readOnlyFds preopen descriptors of read-only mounts
 */
export function guardReadOnly(w, mem, readOnlyFds) {
  const ro = new Set(readOnlyFds);
  if (ro.size === 0) return;
  /**
   * @param {string} name
   * @param {number[]} fdArgs which arguments are descriptors
   */
  const deny = (name, ...fdArgs) => {
    const orig = w[name];
    w[name] = (/** @type {WasiArg[]} */ ...args) => (fdArgs.some((i) => ro.has(Number(args[i]))) ? ERRNO.ROFS : orig(...args));
  };
  deny('fd_write', 0);
  deny('fd_pwrite', 0);
  deny('fd_allocate', 0);
  deny('fd_filestat_set_size', 0);
  deny('fd_filestat_set_times', 0);
  deny('path_create_directory', 0);
  deny('path_remove_directory', 0);
  deny('path_unlink_file', 0);
  deny('path_filestat_set_times', 0);
  deny('path_rename', 0, 3);
  deny('path_link', 0, 4);
  deny('path_symlink', 2);

  const pathOpen = w.path_open;
  w.path_open = (dirfd, dirflags, path, pathLen, oflags, rightsBase, rightsInh, fdflags, fdPtr) => {
    if (!ro.has(dirfd)) return pathOpen(dirfd, dirflags, path, pathLen, oflags, rightsBase, rightsInh, fdflags, fdPtr);
    if (oflags & (OFLAGS_CREAT | OFLAGS_TRUNC)) return ERRNO.ROFS;
    if (BigInt(rightsBase) & WRITE_DATA) return ERRNO.ROFS;
    const rc = pathOpen(dirfd, dirflags, path, pathLen, oflags, BigInt(rightsBase) & ~MUTATING, BigInt(rightsInh) & ~MUTATING, fdflags, fdPtr);
    if (rc === ERRNO.SUCCESS) ro.add(new DataView(mem().buffer).getUint32(fdPtr, true));
    return rc;
  };
  const fdClose = w.fd_close;
  w.fd_close = (fd) => {
    const rc = fdClose(fd);
    if (rc === ERRNO.SUCCESS) ro.delete(fd);
    return rc;
  };
  const fdRenumber = w.fd_renumber;
  w.fd_renumber = (from, to) => {
    const rc = fdRenumber(from, to);
    if (rc === ERRNO.SUCCESS) {
      if (ro.has(from)) ro.add(to);
      else ro.delete(to);
      ro.delete(from);
    }
    return rc;
  };
}

/**
 * Confines every path argument to the mount its directory descriptor belongs
 * to, at the time of the access.
 *
 * uvwasi resolves paths as strings: `<the fd's host path>/<lexically
 * normalised path>`, and the kernel follows every symlink on the way. Two
 * holes follow from that, both closed here:
 *  - symlinks in intermediate components are followed wherever they lead
 *    (measured: with `vol/l -> /etc`, opening `l/hostname` read the host's
 *    /etc/hostname). So before each path call the full host path the kernel
 *    will walk is resolved here component by component, with `lstat`, following
 *    symlinks like the kernel (the last one only when the call follows it), and
 *    the call fails with ENOTCAPABLE unless the result stays inside the mount.
 *  - a mount's host directory, or a directory the module opened, may later be
 *    renamed away and replaced by a symlink (the CVE-2021-25741 class: a subPath
 *    `s` of a volume also mounted whole can be swapped for a link `s -> /etc`).
 *    uvwasi keeps the real path of each preopen as a string (it realpaths it
 *    at init, so even a `/proc/self/fd/<n>` preopen becomes a plain path). So
 *    at every access the mount's host path must still lead to the directory
 *    identified at the start (device and inode, see {@link identifyMounts}),
 *    else ENOTCAPABLE: a swapped mount is gone for the container, never
 *    redirected. A descriptor the module opened is
 *    remembered by the path uvwasi holds for it (relative to the mount) and
 *    that path is re-walked at every access, `fd_readdir` included.
 * Absolute paths are refused (wasi-libc never sends them). Residual risk:
 * another writer of the same host directory (another container sharing the
 * volume) could swap a symlink between this check and the call; the module
 * itself cannot (WASI calls are synchronous and modules single-threaded).
 * @param {Preview1} w the wasi_snapshot_preview1 import object (edited in place)
 * @param {() => WebAssembly.Memory} mem
 * @param {ConfinedMount[]} preopens hostPath: the real path
 *   of the mount's directory; dev/ino: its identity (not checked when absent)
 * @param {typeof import('node:fs')} fs
 * @param {(mount: ConfinedMount) => void} [onReplaced] called once per
 *   mount the first time its directory is found replaced
 * @returns {HostPaths} the same resolution, for the calls answered without node:wasi (wasi-semantics.mjs)
 */
export function confinePaths(w, mem, preopens, fs, onReplaced = () => {}) {
  /**
   * A directory descriptor: its mount's root and its path below it, as uvwasi holds it (lexical).
   * @typedef {{ root: string, rel: string[], id: { dev: bigint, ino: bigint } | undefined, mount: ConfinedMount }} Dir
   */
  /** @type {Map<number, Dir>} fd -> its directory */
  const dirs = new Map();
  for (const p of preopens) {
    const root = p.hostPath.replace(/\/+$/, '') || '/';
    dirs.set(p.fd, { root, rel: [], id: p.dev === undefined || p.ino === undefined ? undefined : { dev: p.dev, ino: p.ino }, mount: p });
  }
  // The mount's directory is still what uvwasi's path for it leads to. One stat: a
  // directory is reachable under one path only (no hard links to directories, and a
  // container cannot bind-mount), so the same device and inode means the same place,
  // even if a symlink inside the volume now leads there. Without an identity, the
  // path must still be a real path.
  const rootIntact = (/** @type {Dir} */ d) => {
    try {
      if (d.id === undefined) return fs.realpathSync.native(d.root) === d.root;
      const st = fs.statSync(d.root, { bigint: true });
      return st.dev === d.id.dev && st.ino === d.id.ino;
    } catch {
      return false;
    }
  };
  const text = (/** @type {number} */ ptr, /** @type {number} */ len) => Buffer.from(mem().buffer, ptr, len).toString('utf8');

  // uvwasi's lexical normalisation of a path below an fd (null: it climbs out).
  /**
   * @param {string[]} base
   * @param {string} path
   * @returns {string[] | null}
   */
  const normalize = (base, path) => {
    const out = [...base];
    for (const c of path.split('/')) {
      if (c === '' || c === '.') continue;
      if (c === '..') {
        if (out.length === 0) return null;
        out.pop();
        continue;
      }
      out.push(c);
    }
    return out;
  };

  /**
   * errno, or the lexical components (below the root) uvwasi will use and the host path they
   * lead to (every symlink on the way resolved, the last one only when followed).
   * @typedef {{ errno: number, root?: undefined, rel?: undefined, id?: undefined, mount?: undefined, host?: undefined }
   *   | { errno: 0, root: string, rel: string[], id: Dir['id'], mount: Dir['mount'], host: string }} Resolved
   */
  /**
   * @param {number} fd
   * @param {string} rel
   * @param {boolean} followLast
   * @returns {Resolved}
   */
  const resolve = (fd, rel, followLast) => {
    const d = dirs.get(fd);
    if (d === undefined) return { errno: ERRNO.SUCCESS }; // not a directory we know: uvwasi answers
    if (rel.startsWith('/')) return { errno: ERRNO.NOTCAPABLE };
    const lexical = normalize(d.rel, rel);
    if (lexical === null) return { errno: ERRNO.NOTCAPABLE };
    if (!rootIntact(d)) {
      if (!d.mount.reported) {
        d.mount.reported = true;
        onReplaced(d.mount);
      }
      return { errno: ERRNO.NOTCAPABLE };
    }
    const todo = [...lexical].reverse();
    let cur = d.root;
    let hops = 0;
    let missing = false; // past a component that does not exist: the rest is only lexical
    while (todo.length > 0) {
      const comp = todo.pop();
      if (comp === '' || comp === '.') continue;
      if (comp === '..') {
        cur = cur.slice(0, cur.lastIndexOf('/')) || '/';
        continue;
      }
      const next = cur === '/' ? `/${comp}` : `${cur}/${comp}`;
      const last = !todo.some((c) => c !== '' && c !== '.');
      if (missing || (last && !followLast)) {
        cur = next;
        continue;
      }
      let st;
      try {
        st = fs.lstatSync(next);
      } catch {
        missing = true;
        cur = next;
        continue;
      }
      if (!st.isSymbolicLink()) {
        cur = next;
        continue;
      }
      if (++hops > 40) return { errno: ERRNO.LOOP };
      const target = fs.readlinkSync(next);
      if (target.startsWith('/')) cur = '/';
      todo.push(...target.split('/').reverse());
    }
    const inside = cur === d.root || cur.startsWith(d.root === '/' ? '/' : `${d.root}/`);
    return inside ? { errno: ERRNO.SUCCESS, root: d.root, rel: lexical, id: d.id, mount: d.mount, host: cur } : { errno: ERRNO.NOTCAPABLE };
  };
  /**
   * @param {number} fd
   * @param {number} ptr
   * @param {number} len
   * @param {boolean} followLast
   * @returns {Resolved}
   */
  const resolveArg = (fd, ptr, len, followLast) => {
    if (!dirs.has(fd)) return { errno: ERRNO.SUCCESS };
    let rel;
    try {
      rel = text(ptr, len);
    } catch {
      return { errno: ERRNO.FAULT };
    }
    // As wasmtime: a NUL byte cannot be in a host path (uvwasi would cut the path there), and
    // an empty path names nothing.
    if (rel.includes('\0')) return { errno: ERRNO.INVAL };
    if (rel === '') return { errno: ERRNO.NOENT };
    return resolve(fd, rel, followLast);
  };
  const FOLLOW = 1;
  /**
   * @param {string} name
   * @param {Array<[number, number, number, boolean | number]>} specs
   */
  const check = (name, ...specs) => {
    const orig = w[name];
    w[name] = (/** @type {WasiArg[]} */ ...a) => {
      for (const [fdI, ptrI, lenI, follow] of specs) {
        const arg = (/** @type {number} */ i) => Number(a[i]);
        const r = resolveArg(arg(fdI), arg(ptrI), arg(lenI), typeof follow === 'number' ? (arg(follow) & FOLLOW) !== 0 : follow);
        if (r.errno !== ERRNO.SUCCESS) return r.errno;
      }
      return orig(...a);
    };
  };
  // [fd arg, path ptr arg, path len arg, follow the last symlink: boolean or index of a lookupflags arg]
  check('path_create_directory', [0, 1, 2, false]);
  check('path_remove_directory', [0, 1, 2, false]);
  check('path_unlink_file', [0, 1, 2, false]);
  check('path_readlink', [0, 1, 2, false]);
  check('path_filestat_get', [0, 2, 3, 1]);
  check('path_filestat_set_times', [0, 2, 3, 1]);
  check('path_rename', [0, 1, 2, false], [3, 4, 5, false]);
  check('path_link', [0, 2, 3, 1], [4, 5, 6, false]);
  check('path_symlink', [2, 3, 4, false]);

  // uvwasi lists a directory by opening its path again: check that path too.
  const fdReaddir = w.fd_readdir;
  w.fd_readdir = (fd, ...rest) => {
    const r = resolve(fd, '', true);
    return r.errno !== ERRNO.SUCCESS ? r.errno : fdReaddir(fd, ...rest);
  };

  const pathOpen = w.path_open;
  w.path_open = (dirfd, dirflags, path, pathLen, oflags, rightsBase, rightsInh, fdflags, fdPtr) => {
    const r = resolveArg(dirfd, path, pathLen, (dirflags & FOLLOW) !== 0);
    if (r.errno !== ERRNO.SUCCESS) return r.errno;
    const rc = pathOpen(dirfd, dirflags, path, pathLen, oflags, rightsBase, rightsInh, fdflags, fdPtr);
    if (rc === ERRNO.SUCCESS && r.rel !== undefined) {
      dirs.set(new DataView(mem().buffer).getUint32(fdPtr, true), { root: r.root, rel: r.rel, id: r.id, mount: r.mount });
    }
    return rc;
  };
  const fdClose = w.fd_close;
  w.fd_close = (fd) => {
    const rc = fdClose(fd);
    if (rc === ERRNO.SUCCESS) dirs.delete(fd);
    return rc;
  };
  const fdRenumber = w.fd_renumber;
  w.fd_renumber = (from, to) => {
    const rc = fdRenumber(from, to);
    if (rc === ERRNO.SUCCESS) {
      const d = dirs.get(from);
      dirs.delete(from);
      if (d) dirs.set(to, d);
      else dirs.delete(to);
    }
    return rc;
  };
  return {
    resolve: (fd, ptr, len, follow) => {
      const r = resolveArg(fd, ptr, len, follow);
      return r.errno !== ERRNO.SUCCESS || r.host !== undefined ? r : undefined;
    },
    hostOf: (fd) => {
      if (!dirs.has(fd)) return undefined;
      const r = resolve(fd, '', true);
      return r.errno !== ERRNO.SUCCESS || r.host !== undefined ? r : undefined;
    },
  };
}

/**
 * Where the paths of a module's calls lead on the host, as {@link confinePaths} checks them:
 * `resolve` for a path argument below a directory descriptor, `hostOf` for a descriptor opened
 * through a path. Both answer an errno (the access is refused: outside the mount, a replaced
 * mount, a NUL byte) or the host path (`host`, and `root`, its mount's); undefined for a
 * descriptor not opened through a path (stdio, sockets), which node:wasi answers for.
 * @typedef {{
 *   resolve(fd: number, ptr: number, len: number, follow: boolean): { errno: number, host?: string, root?: string } | undefined,
 *   hostOf(fd: number): { errno: number, host?: string, root?: string } | undefined,
 * }} HostPaths
 */

/**
 * Identifies every mount's host directory before the module starts: opens it
 * with O_NOFOLLOW, checks that the directory opened is the one named (its real
 * path is `hostPath`: a path swapped before the start is refused) and records
 * its device and inode, which {@link confinePaths} compares at every access.
 * @param {ReadonlyArray<{ readonly name?: string, readonly hostPath: string }>} mounts hostPath: a real (symlink-free) path
 * @param {typeof import('node:fs')} fs
 * @returns {Array<{ dev: bigint, ino: bigint }>} in order
 */
export function identifyMounts(mounts, fs) {
  const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = fs.constants;
  return mounts.map((m) => {
    const what = `volume ${m.name ?? m.hostPath}`;
    let fd;
    try {
      fd = fs.openSync(m.hostPath, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    } catch (e) {
      const err = /** @type {NodeJS.ErrnoException} */ (e);
      throw new MountError(`${what}: cannot open its host directory: ${err.code ?? err.message}`);
    }
    try {
      if (fs.realpathSync(`/proc/self/fd/${fd}`) !== m.hostPath) {
        throw new MountError(`${what}: its host directory was replaced before the container started`);
      }
      const st = fs.fstatSync(fd, { bigint: true });
      return { dev: st.dev, ino: st.ino };
    } finally {
      fs.closeSync(fd);
    }
  });
}

/** A mount that cannot be presented to the module (thrown by {@link identifyMounts}). */
export class MountError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'MountError';
  }
}

/**
 * Keeps the set of open descriptors (preopens and what path_open returned) so
 * that they can be closed when the module ends (uvwasi does not close them
 * when the worker goes away: measured one leaked directory fd per mount per
 * container; they are not fds Node's trackUnmanagedFds knows about), and
 * enforces the descriptor budget: every WASI descriptor is a host descriptor
 * of nodelet's process, so without a budget one module opening files until it
 * fails takes nodelet's whole RLIMIT_NOFILE (measured: 20,000 of 20,000,
 * /healthz and the Lease stopped). `path_open` fails with
 *  - EMFILE once the container holds `budget.max` descriptors (preopens count);
 *  - ENFILE once all containers of the node together hold `budget.nodeMax`
 *    (`budget.node[0]`, shared by every worker, counts them).
 * Both bound the bookkeeping here and in the other wrappers too.
 * @param {Preview1} w the wasi_snapshot_preview1 import object (edited in place)
 * @param {() => WebAssembly.Memory} mem
 * @param {number[]} preopenFds
 * @param {{ max: number, node?: Int32Array, nodeMax?: number }} [budget] no budget when omitted
 * @returns {() => void} closes every descriptor still open
 */
export function trackDescriptors(w, mem, preopenFds, budget = { max: Infinity }) {
  const open = new Set(preopenFds);
  const node = budget.node;
  const nodeMax = budget.nodeMax ?? Infinity;
  if (node) Atomics.add(node, 0, open.size);
  const release = (n = 1) => {
    if (node) Atomics.sub(node, 0, n);
  };
  const close = w.fd_close;
  const pathOpen = w.path_open;
  w.path_open = (...a) => {
    if (open.size >= budget.max) return ERRNO.MFILE;
    if (node && Atomics.add(node, 0, 1) >= nodeMax) {
      release();
      return ERRNO.NFILE;
    }
    const rc = pathOpen(...a);
    if (rc === ERRNO.SUCCESS) open.add(new DataView(mem().buffer).getUint32(a[8], true));
    else release();
    return rc;
  };
  w.fd_close = (fd) => {
    const rc = close(fd);
    if (rc === ERRNO.SUCCESS && open.delete(fd)) release();
    return rc;
  };
  const fdRenumber = w.fd_renumber;
  w.fd_renumber = (from, to) => {
    const rc = fdRenumber(from, to);
    if (rc !== ERRNO.SUCCESS || from === to) return rc;
    // `to`'s old descriptor was closed; `from`'s moved to `to`.
    const hadTo = open.has(to);
    if (open.delete(from)) {
      open.add(to);
      if (hadTo) release();
    } else if (hadTo) {
      open.delete(to);
      release();
    }
    return rc;
  };
  return () => {
    for (const fd of open) close(fd);
    release(open.size);
    open.clear();
  };
}

/**
 * Makes every import throw {@link StoppedError} once `control[0]` is set, so
 * a module that is doing I/O unwinds (and cleans up) as soon as it is stopped.
 * `onCall`, if given, runs before each import (the memory-size report of
 * {@link publishMemory}).
 * @param {Preview1} w the wasi_snapshot_preview1 import object (edited in place)
 * @param {Int32Array} control shared with the main thread
 * @param {() => void} [onCall]
 */
export function stopOnRequest(w, control, onCall) {
  for (const [name, fn] of Object.entries(w)) {
    if (name === 'proc_exit' || typeof fn !== 'function') continue;
    w[name] = onCall
      ? (/** @type {WasiArg[]} */ ...a) => {
          if (Atomics.load(control, 0) !== 0) throw new StoppedError();
          onCall();
          return fn(...a);
        }
      : (/** @type {WasiArg[]} */ ...a) => {
          if (Atomics.load(control, 0) !== 0) throw new StoppedError();
          return fn(...a);
        };
  }
}

/**
 * Byte offset in the control buffer of the module's linear memory size (a
 * Float64 the main thread reads for `stats()`); [0, 4) is the stop flag.
 */
export const MEMORY_SLOT_OFFSET = 8;

/**
 * A function that stores the module's current linear memory size in the
 * control buffer, for the main thread to read without asking the (busy)
 * worker. Called at every WASI call, so it is as fresh as the module's last call.
 * @param {SharedArrayBuffer} control
 * @param {() => WebAssembly.Memory | undefined} mem
 */
export function publishMemory(control, mem) {
  if (control.byteLength < MEMORY_SLOT_OFFSET + 8) return () => {}; // a caller without the slot
  const slot = new Float64Array(control, MEMORY_SLOT_OFFSET, 1);
  return () => {
    slot[0] = mem()?.buffer.byteLength ?? 0;
  };
}

/**
 * The kernel thread id of the calling thread (Linux `/proc/thread-self`), so
 * the main thread can read this worker's CPU time from
 * `/proc/self/task/<tid>/schedstat`; undefined elsewhere.
 * @param {typeof import('node:fs')} fs
 */
export function kernelThreadId(fs) {
  try {
    const m = /task\/(\d+)$/.exec(fs.readlinkSync('/proc/thread-self'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Thrown out of a sleeping module when the container is being stopped. */
export class StoppedError extends Error {
  constructor() {
    super('container stopped');
    this.name = 'StoppedError';
  }
}

/**
 * Replaces clock-only poll_oneoff (what sleep()/nanosleep use) with a wait on
 * `control[0]`: stop() stores 1 there and notifies, which ends the wait and
 * unwinds the module with {@link StoppedError}. Subscriptions on descriptors
 * still go to node:wasi. With the control buffer's wake word (memory-limit.mjs) it waits on
 * that word, which the stop and every memory-limit request change: `onWake` runs, then the
 * sleep goes on.
 * @param {Preview1} w the wasi_snapshot_preview1 import object (edited in place)
 * @param {() => WebAssembly.Memory} mem
 * @param {Int32Array} control shared with the main thread
 * @param {() => void} [onWake] called each time the wait ends before a deadline
 */
export function interruptibleSleep(w, mem, control, onWake) {
  const pollOneoff = w.poll_oneoff;
  w.poll_oneoff = (inPtr, outPtr, nsubs, neventsPtr) => {
    if (nsubs === 0) return ERRNO.INVAL;
    const dv = new DataView(mem().buffer);
    const deadlines = [];
    for (let i = 0; i < nsubs; i++) {
      const base = inPtr + 48 * i;
      if (dv.getUint8(base + 8) !== 0) return pollOneoff(inPtr, outPtr, nsubs, neventsPtr); // fd subscription
      const clock = dv.getUint32(base + 16, true);
      if (clock > 1) return pollOneoff(inPtr, outPtr, nsubs, neventsPtr); // cputime clocks
      const timeout = dv.getBigUint64(base + 24, true);
      const abs = (dv.getUint16(base + 40, true) & 1) !== 0;
      deadlines.push({ userdata: dv.getBigUint64(base, true), clock, at: abs ? timeout : clockNow(clock) + timeout });
    }
    let due = [];
    // With the wake word (memory-limit.mjs), wait on it: the stop and every request change it.
    const word = control.length > WAKE ? WAKE : 0;
    for (;;) {
      const seen = word === WAKE ? Atomics.load(control, WAKE) : 0;
      if (Atomics.load(control, 0) !== 0) throw new StoppedError();
      onWake?.();
      due = deadlines.filter((d) => d.at <= clockNow(d.clock));
      if (due.length > 0) break;
      const waitNs = deadlines.reduce((m, d) => {
        const r = d.at - clockNow(d.clock);
        return r < m ? r : m;
      }, 2n ** 63n);
      Atomics.wait(control, word, seen, Math.max(1, Math.ceil(Number(waitNs) / 1e6)));
    }
    const out = new DataView(mem().buffer);
    due.forEach((d, k) => {
      const base = outPtr + 32 * k;
      out.setBigUint64(base, d.userdata, true);
      out.setUint16(base + 8, ERRNO.SUCCESS, true);
      out.setUint8(base + 10, 0); // eventtype clock
      out.setBigUint64(base + 16, 0n, true);
      out.setUint16(base + 24, 0, true);
    });
    out.setUint32(neventsPtr, due.length, true);
    return ERRNO.SUCCESS;
  };
}

/**
 * CLOCK_REALTIME (0) and CLOCK_MONOTONIC (1) in nanoseconds, as uvwasi reads them.
 * @param {number} clock
 */
export function clockNow(clock) {
  if (clock === 1) return process.hrtime.bigint();
  return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e3)) * 1000n;
}

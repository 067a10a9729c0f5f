// WASI preview1 semantics where node:wasi (uvwasi 0.0.23) departs from wasmtime, the reference:
// the calls below are answered here, on Node's `fs`, or node:wasi's answer is corrected.
// Plain JavaScript: workers start without a TypeScript loader (see README.md); typed with JSDoc.
// Measured with WebAssembly/wasi-testsuite (test/fixtures/wasi-testsuite, 72 preview1 tests):
// node:wasi alone passes 60, wasmtime 72, node:wasi with these corrections 72.
//
//  - i32 arguments are unsigned (a module passing fd -1 means 4294967295: EBADF, not EINVAL;
//    node:wasi refuses a negative number as an invalid argument).
//  - fd_fdstat_get: fs_flags are WASI's fdflags (uvwasi copies the host's raw fcntl flags, e.g.
//    O_LARGEFILE for a directory, into them), as the module opened or set them.
//  - fd_prestat_get/dir_name: EBADF for a descriptor that is not a preopen, ENAMETOOLONG for a
//    buffer too small (uvwasi: EINVAL, ENOBUFS).
//  - path_open without LOOKUPFLAGS_SYMLINK_FOLLOW on a symlink: ELOOP (EEXIST with
//    O_CREAT|O_EXCL); a trailing slash on a non-directory: ENOTDIR (uvwasi follows or drops them).
//  - path_readlink: a buffer too small gets the first bytes of the target (uvwasi: ENOBUFS).
//  - fd_readdir: `.` and `..` first, each entry's inode, cookies that stay valid while the
//    descriptor is open (the listing is read at cookie 0 and kept), wasmtime's EBADF on a file.
//  - fd_filestat_set_times/path_filestat_set_times: nanoseconds, a field not asked for left
//    exactly as it was (uvwasi truncates to seconds — and its path_filestat_set_times leaves the
//    descriptor's lock held on invalid flags, so that the module's next call on it never returns).
//    Node's fs sets times to the microsecond only: where that is not exact, one utimensat(2)
//    made by Perl (`perl-base`, essential on Debian/Ubuntu; x64 and arm64 system call numbers)
//    sets them; without Perl they stay at the microsecond.
//  - poll_oneoff: a regular file, directory or character device (stdin and the captured
//    stdout/stderr are /dev/null to node:wasi) is ready at once, as wasmtime reports it; uvwasi
//    polls them with epoll, which refuses them (EPERM). A descriptor that is not open: EBADF.
//  - sock_shutdown on something not a socket: ENOTSOCK, on no descriptor EBADF (uvwasi: ENOTSUP).
//  - a NUL byte in a path: EINVAL (a symlink's target here, the others in wasi-imports.mjs
//    confinePaths), an empty path: ENOENT.
//
// Paths go through confinePaths' resolution (wasi-imports.mjs `HostPaths`): every symlink on the
// way is resolved here, inside the mount, and the calls answered here act on that host path.
//
// Libraries considered for owning the preview1 layer instead (none fits): @tybys/wasm-util and
// wasi-js (preview1 over Node's fs: microsecond timestamps, no confinement to the preopen,
// no sockets), @bjorn3/browser_wasi_shim, @runno/wasi and @cloudflare/workers-wasi (in-memory
// file systems), @wasmer/wasi (its own virtual file system, in Wasm). node:wasi stays underneath for
// the descriptor table, reads, writes and the rest; the corrections above are what the suite and
// wasmtime's answers (measured on edge cases) showed wrong.
import { clockNow, ERRNO } from './wasi-imports.mjs';
/** @import { Answer, Preview1, WasiArg } from './preview1.ts' */
/** @import { HostPaths } from './wasi-imports.mjs' */

/** preview1 errno values used here. */
const E = { ...ERRNO, ACCES: 2, EXIST: 20, ISDIR: 31, NAMETOOLONG: 37, NOBUFS: 42, NOTDIR: 54, NOTSOCK: 57, PERM: 63 };
/** Node's error codes as preview1 errnos (anything else: EIO). */
const FROM_CODE = /** @type {Record<string, number>} */ ({
  EACCES: 2,
  EBADF: 8,
  EBUSY: 10,
  EEXIST: 20,
  EINVAL: 28,
  EIO: 29,
  EISDIR: 31,
  ELOOP: 32,
  EMLINK: 34,
  ENAMETOOLONG: 37,
  ENOENT: 44,
  ENOSPC: 51,
  ENOTDIR: 54,
  ENOTEMPTY: 55,
  EPERM: 63,
  EROFS: 69,
  EXDEV: 75,
});
const errnoOf = (/** @type {unknown} */ e) => FROM_CODE[/** @type {NodeJS.ErrnoException} */ (e).code ?? ''] ?? 29;

const FILETYPE = { UNKNOWN: 0, BLOCK: 1, CHAR: 2, DIR: 3, FILE: 4, DGRAM: 5, STREAM: 6, SYMLINK: 7 };
const RIGHT_FD_READDIR = 1n << 14n;
const RIGHT_PATH_READLINK = 1n << 15n;
const RIGHT_PATH_FILESTAT_SET_TIMES = 1n << 20n;
const LOOKUP_FOLLOW = 1;
const OFLAGS_CREAT = 1;
const OFLAGS_EXCL = 4;
const FST = { ATIM: 1, ATIM_NOW: 2, MTIM: 4, MTIM_NOW: 8 };
const EVENTTYPE = { CLOCK: 0, FD_READ: 1, FD_WRITE: 2 };
/** Linux's open flags (the generic values: x64 and arm64) and the fdflags they are. */
const HOST_FDFLAGS = [
  [0o2000, 1], // O_APPEND: APPEND
  [0o10000, 2], // O_DSYNC: DSYNC
  [0o4000, 4], // O_NONBLOCK: NONBLOCK
];
/** utimensat(2) by CPU (x86_64's table; arm64's generic one). */
const UTIMENSAT = /** @type {Partial<Record<string, number>>} */ ({ x64: 280, arm64: 88 })[process.arch];
/** One utimensat(AT_FDCWD, path, [atime, mtime], AT_SYMLINK_NOFOLLOW); exits with errno on failure. */
const PERL_UTIMENSAT = 'syscall($ARGV[0]+0, -100, $ARGV[1], pack("q4", $ARGV[2], $ARGV[3], $ARGV[4], $ARGV[5]), 0x100) == 0 or exit($!+0)';
const PERL = '/usr/bin/perl';

/**
 * Corrects `w` (node:wasi's import object, before any other wrapper: the others, the sockets'
 * included, forward to these) as the header says.
 * @param {Preview1} w the wasi_snapshot_preview1 import object (edited in place)
 * @param {() => WebAssembly.Memory} mem
 * @param {() => HostPaths | undefined} paths confinePaths' resolution (set up after this)
 * @param {typeof import('node:fs')} fs
 */
export function wasiSemantics(w, mem, paths, fs) {
  const orig = { ...w };
  const dv = () => new DataView(mem().buffer);

  // A call of node:wasi that writes `size` bytes of answer, made on the first bytes of the
  // module's memory and put back after (the calls answered here have no buffer to lend).
  /**
   * @param {(ptr: number) => Answer} call one of node:wasi's own (synchronous) functions
   * @param {number} size
   * @returns {{ rc: number, view: DataView }}
   */
  const scratch = (call, size) => {
    const u8 = new Uint8Array(mem().buffer);
    const saved = u8.slice(0, size);
    try {
      const rc = /** @type {number} */ (call(0));
      return { rc, view: new DataView(new Uint8Array(mem().buffer).slice(0, size).buffer) };
    } finally {
      new Uint8Array(mem().buffer).set(saved, 0);
    }
  };
  /** @param {number} fd */
  const fdstat = (fd) => {
    const { rc, view } = scratch((p) => orig.fd_fdstat_get(fd, p), 24);
    return { rc, type: view.getUint8(0), base: view.getBigUint64(8, true) };
  };
  /** @param {number} fd */
  const filestat = (fd) => {
    const { rc, view } = scratch((p) => orig.fd_filestat_get(fd, p), 64);
    return { rc, dev: view.getBigUint64(0, true), ino: view.getBigUint64(8, true), type: view.getUint8(16), size: view.getBigUint64(32, true) };
  };
  const text = (/** @type {number} */ ptr, /** @type {number} */ len) => Buffer.from(mem().buffer, ptr, len).toString('utf8');

  /** @type {Map<number, number>} fd -> the fdflags it was opened with or last set to */
  const fdflags = new Map();
  /** @type {Map<number, { host: string, entries: Array<{ name: Buffer, ino: bigint, type: number }> }>} fd -> its listing since cookie 0 */
  const listings = new Map();
  const forget = (/** @type {number} */ fd) => {
    fdflags.delete(fd);
    listings.delete(fd);
  };

  w.fd_fdstat_get = (fd, ptr) => {
    const rc = orig.fd_fdstat_get(fd, ptr);
    if (rc !== E.SUCCESS) return rc;
    const d = dv();
    let flags = fdflags.get(fd);
    if (flags === undefined) {
      const raw = d.getUint16(ptr + 2, true);
      flags = 0;
      for (const [host, wasi] of HOST_FDFLAGS) if (raw & host) flags |= wasi;
    }
    d.setUint16(ptr + 2, flags, true);
    return rc;
  };
  w.fd_fdstat_set_flags = (fd, flags) => {
    const rc = orig.fd_fdstat_set_flags(fd, flags);
    if (rc === E.SUCCESS) fdflags.set(fd, flags);
    return rc;
  };
  w.fd_close = (fd) => {
    const rc = orig.fd_close(fd);
    if (rc === E.SUCCESS) forget(fd);
    return rc;
  };
  w.fd_renumber = (from, to) => {
    const rc = orig.fd_renumber(from, to);
    if (rc === E.SUCCESS && from !== to) {
      const flags = fdflags.get(from);
      forget(to);
      forget(from);
      if (flags !== undefined) fdflags.set(to, flags);
    }
    return rc;
  };
  w.fd_prestat_get = (fd, ptr) => {
    const rc = orig.fd_prestat_get(fd, ptr);
    return rc === E.INVAL ? E.BADF : rc;
  };
  w.fd_prestat_dir_name = (fd, ptr, len) => {
    const rc = orig.fd_prestat_dir_name(fd, ptr, len);
    return rc === E.NOBUFS ? E.NAMETOOLONG : rc === E.INVAL ? E.BADF : rc;
  };

  w.path_open = (dirfd, dirflags, path, pathLen, oflags, rightsBase, rightsInh, flags, fdPtr) => {
    const r = paths()?.resolve(dirfd, path, pathLen, (dirflags & LOOKUP_FOLLOW) !== 0);
    const host = r?.host;
    if (host !== undefined) {
      const trailingSlash = text(path, pathLen).endsWith('/');
      if (trailingSlash) {
        // The kernel follows a last symlink before a slash; what is there must be a directory.
        const t = paths()?.resolve(dirfd, path, pathLen, true);
        const followed = t?.host;
        if (followed === undefined) return t?.errno ?? E.NOTCAPABLE;
        const st = quietly(() => fs.statSync(followed));
        if (st && !st.isDirectory()) return E.NOTDIR;
      } else if ((dirflags & LOOKUP_FOLLOW) === 0 && quietly(() => fs.lstatSync(host))?.isSymbolicLink()) {
        return oflags & OFLAGS_CREAT && oflags & OFLAGS_EXCL ? E.EXIST : E.LOOP;
      }
    } else if (r !== undefined) {
      return r.errno;
    }
    const rc = orig.path_open(dirfd, dirflags, path, pathLen, oflags, rightsBase, rightsInh, flags, fdPtr);
    if (rc === E.SUCCESS) {
      const fd = dv().getUint32(fdPtr, true);
      forget(fd);
      fdflags.set(fd, flags);
    }
    return rc;
  };

  w.path_symlink = (oldPath, oldLen, fd, newPath, newLen) => {
    let targetText;
    try {
      targetText = text(oldPath, oldLen);
    } catch {
      return E.FAULT;
    }
    return targetText.includes('\0') ? E.INVAL : orig.path_symlink(oldPath, oldLen, fd, newPath, newLen);
  };

  w.path_readlink = (fd, path, pathLen, buf, bufLen, usedPtr) => {
    const asked = paths()?.resolve(fd, path, pathLen, false);
    if (asked === undefined) return orig.path_readlink(fd, path, pathLen, buf, bufLen, usedPtr);
    // "link/" names what the link leads to (the kernel follows it), never a symlink.
    const r = asked.host !== undefined && text(path, pathLen).endsWith('/') ? paths()?.resolve(fd, path, pathLen, true) : asked;
    if (r?.host === undefined) return r?.errno ?? E.NOTCAPABLE;
    const st = fdstat(fd);
    if (st.rc !== E.SUCCESS) return st.rc;
    if ((st.base & RIGHT_PATH_READLINK) === 0n) return E.NOTCAPABLE;
    let target;
    try {
      target = fs.readlinkSync(r.host, { encoding: 'buffer' });
    } catch (e) {
      return errnoOf(e);
    }
    const n = Math.min(target.length, bufLen);
    if (buf + n > mem().buffer.byteLength) return E.FAULT;
    new Uint8Array(mem().buffer).set(target.subarray(0, n), buf);
    dv().setUint32(usedPtr, n, true);
    return E.SUCCESS;
  };

  w.fd_readdir = (fd, buf, bufLen, cookie, usedPtr) => {
    const r = paths()?.hostOf(fd);
    if (r === undefined) return orig.fd_readdir(fd, buf, bufLen, cookie, usedPtr);
    if (r.host === undefined) return r.errno;
    const st = fdstat(fd);
    if (st.rc !== E.SUCCESS) return st.rc;
    if (st.type !== FILETYPE.DIR) return E.BADF;
    if ((st.base & RIGHT_FD_READDIR) === 0n) return E.NOTCAPABLE;
    let listing = listings.get(fd);
    if (cookie === 0n || listing === undefined || listing.host !== r.host) {
      try {
        listing = { host: r.host, entries: list(fs, r.host, r.host === r.root) };
      } catch (e) {
        return errnoOf(e);
      }
      listings.set(fd, listing);
    }
    if (buf + bufLen > mem().buffer.byteLength) return E.FAULT;
    const d = dv();
    const u8 = new Uint8Array(mem().buffer);
    let used = 0;
    for (let i = Number(cookie); i < listing.entries.length && used < bufLen; i++) {
      const e = listing.entries[i];
      const head = new DataView(new ArrayBuffer(24));
      head.setBigUint64(0, BigInt(i + 1), true);
      head.setBigUint64(8, e.ino, true);
      head.setUint32(16, e.name.length, true);
      head.setUint8(20, e.type);
      const bytes = Buffer.concat([new Uint8Array(head.buffer), e.name]);
      const k = Math.min(bytes.length, bufLen - used);
      u8.set(bytes.subarray(0, k), buf + used);
      used += k;
    }
    d.setUint32(usedPtr, used, true);
    return E.SUCCESS;
  };

  w.path_filestat_set_times = (fd, lookup, path, pathLen, atim, mtim, fst) => {
    if (!validFst(fst)) return E.INVAL;
    const r = paths()?.resolve(fd, path, pathLen, (lookup & LOOKUP_FOLLOW) !== 0);
    if (r === undefined) return orig.path_filestat_set_times(fd, lookup, path, pathLen, atim, mtim, fst);
    if (r.host === undefined) return r.errno;
    const st = fdstat(fd);
    if (st.rc !== E.SUCCESS) return st.rc;
    if ((st.base & RIGHT_PATH_FILESTAT_SET_TIMES) === 0n) return E.NOTCAPABLE;
    try {
      const before = fs.lstatSync(r.host, { bigint: true });
      setTimes(fs, r.host, target(atim, fst, FST.ATIM, FST.ATIM_NOW, before.atimeNs), target(mtim, fst, FST.MTIM, FST.MTIM_NOW, before.mtimeNs));
    } catch (e) {
      return errnoOf(e);
    }
    return E.SUCCESS;
  };

  w.fd_filestat_set_times = (fd, atim, mtim, fst) => {
    if (!validFst(fst)) return E.INVAL;
    const r = paths()?.hostOf(fd);
    const host = r?.host;
    const before = host === undefined ? undefined : quietly(() => fs.lstatSync(host, { bigint: true }));
    // node:wasi checks the descriptor and its rights and sets the times to the second.
    const rc = orig.fd_filestat_set_times(fd, atim, mtim, fst);
    if (rc !== E.SUCCESS || before === undefined || host === undefined) return rc;
    // Then to the nanosecond, by the path it was opened by, if that path still names its file.
    const now = filestat(fd);
    if (now.rc !== E.SUCCESS || now.dev !== before.dev || now.ino !== before.ino) return rc;
    try {
      setTimes(fs, host, target(atim, fst, FST.ATIM, FST.ATIM_NOW, before.atimeNs), target(mtim, fst, FST.MTIM, FST.MTIM_NOW, before.mtimeNs));
    } catch {
      // as node:wasi left them
    }
    return rc;
  };

  w.sock_shutdown = (fd, how) => {
    const st = fdstat(fd);
    if (st.rc !== E.SUCCESS) return st.rc;
    if (st.type !== FILETYPE.STREAM && st.type !== FILETYPE.DGRAM) return E.NOTSOCK;
    return orig.sock_shutdown(fd, how);
  };

  w.poll_oneoff = (inPtr, outPtr, nsubs, neventsPtr) => {
    if (nsubs === 0) return E.INVAL;
    const d = dv();
    /** @type {Array<{ userdata: bigint, error: number, type: number, nbytes: bigint }>} */
    const ready = [];
    /** @type {Array<{ userdata: bigint, clock: number, at: bigint }>} */
    const clocks = [];
    let waiting = false; // a descriptor node:wasi must poll (a pipe, a socket)
    for (let i = 0; i < nsubs; i++) {
      const base = inPtr + 48 * i;
      const userdata = d.getBigUint64(base, true);
      const type = d.getUint8(base + 8);
      if (type === EVENTTYPE.CLOCK) {
        const clock = d.getUint32(base + 16, true);
        const timeout = d.getBigUint64(base + 24, true);
        if (clock > 1) return orig.poll_oneoff(inPtr, outPtr, nsubs, neventsPtr);
        clocks.push({ userdata, clock, at: d.getUint16(base + 40, true) & 1 ? timeout : clockNow(clock) + timeout });
        continue;
      }
      if (type !== EVENTTYPE.FD_READ && type !== EVENTTYPE.FD_WRITE) return E.INVAL;
      const fd = d.getUint32(base + 16, true);
      const st = filestat(fd);
      if (st.rc !== E.SUCCESS) return st.rc;
      if (st.type === FILETYPE.FILE || st.type === FILETYPE.DIR || st.type === FILETYPE.CHAR || st.type === FILETYPE.BLOCK) {
        let nbytes = 0n;
        if (type === EVENTTYPE.FD_READ && st.type === FILETYPE.FILE) {
          const { rc, view } = scratch((p) => orig.fd_tell(fd, p), 8);
          const pos = rc === E.SUCCESS ? view.getBigUint64(0, true) : 0n;
          nbytes = st.size > pos ? st.size - pos : 0n;
        }
        ready.push({ userdata, error: E.SUCCESS, type, nbytes });
      } else {
        waiting = true;
      }
    }
    if (ready.length === 0 && waiting) return orig.poll_oneoff(inPtr, outPtr, nsubs, neventsPtr);
    for (const c of clocks) if (c.at <= clockNow(c.clock)) ready.push({ userdata: c.userdata, error: E.SUCCESS, type: EVENTTYPE.CLOCK, nbytes: 0n });
    if (ready.length === 0) return orig.poll_oneoff(inPtr, outPtr, nsubs, neventsPtr); // clocks only: a sleep
    const out = dv();
    ready.forEach((ev, k) => {
      const base = outPtr + 32 * k;
      out.setBigUint64(base, ev.userdata, true);
      out.setUint16(base + 8, ev.error, true);
      out.setUint8(base + 10, ev.type);
      out.setBigUint64(base + 16, ev.nbytes, true);
      out.setUint16(base + 24, 0, true);
    });
    out.setUint32(neventsPtr, ready.length, true);
    return E.SUCCESS;
  };

  // i32 arguments are unsigned: node:wasi refuses a negative number (EINVAL) where the module
  // meant a large one (a descriptor, or an address above 2 GiB).
  for (const [name, fn] of Object.entries(w)) {
    if (typeof fn !== 'function') continue;
    w[name] = (/** @type {WasiArg[]} */ ...a) => {
      for (let i = 0; i < a.length; i++) {
        const v = a[i];
        if (typeof v === 'number' && v < 0) a[i] = v >>> 0;
      }
      return fn(...a);
    };
  }
}

/**
 * `f()`, or undefined when it throws (a stat of something that may not be there).
 * @template T
 * @param {() => T} f
 * @returns {T | undefined}
 */
function quietly(f) {
  try {
    return f();
  } catch {
    return undefined;
  }
}

/** Whether fstflags asks for something possible (not both a time and "now" for the same field, no unknown bit). */
const validFst = (/** @type {number} */ f) =>
  (f & ~(FST.ATIM | FST.ATIM_NOW | FST.MTIM | FST.MTIM_NOW)) === 0 &&
  (f & (FST.ATIM | FST.ATIM_NOW)) !== (FST.ATIM | FST.ATIM_NOW) &&
  (f & (FST.MTIM | FST.MTIM_NOW)) !== (FST.MTIM | FST.MTIM_NOW);

/**
 * The time a field gets: the one given, now, or (neither asked for) the one it has.
 * @param {bigint} given
 * @param {number} fst
 * @param {number} set
 * @param {number} setNow
 * @param {bigint} current
 */
const target = (given, fst, set, setNow, current) => (fst & set ? BigInt.asUintN(64, given) : fst & setNow ? clockNow(0) : current);

/**
 * Sets a path's access and modification times (nanoseconds since the epoch) without following
 * a last symlink: through Node's fs (to the microsecond), then, where that was not exact, by
 * utimensat(2) made by Perl; without it (or if it fails) the microsecond result stays.
 * @param {typeof import('node:fs')} fs
 * @param {string} host
 * @param {bigint} atime
 * @param {bigint} mtime
 */
function setTimes(fs, host, atime, mtime) {
  const seconds = (/** @type {bigint} */ ns) => Number(ns / 1000n) / 1e6;
  fs.lutimesSync(host, seconds(atime), seconds(mtime));
  const st = fs.lstatSync(host, { bigint: true });
  if ((st.atimeNs === atime && st.mtimeNs === mtime) || UTIMENSAT === undefined || !perlAvailable(fs)) return;
  const split = (/** @type {bigint} */ ns) => [String(ns / 1_000_000_000n), String(ns % 1_000_000_000n)];
  // Loaded here, when first needed: importing node:child_process (17 internal modules) made every
  // `nodelet run` ~2 ms and ~1 MiB dearer, though only this call uses it (bench/README.md, "nodelet run").
  process
    .getBuiltinModule('node:child_process')
    .spawnSync(PERL, ['-e', PERL_UTIMENSAT, String(UTIMENSAT), host, ...split(atime), ...split(mtime)], { stdio: 'ignore', timeout: 10_000 });
}

/** @type {boolean | undefined} */
let perl;
/** @param {typeof import('node:fs')} fs */
function perlAvailable(fs) {
  if (perl === undefined) {
    try {
      fs.accessSync(PERL, fs.constants.X_OK);
      perl = true;
    } catch {
      perl = false;
    }
  }
  return perl;
}

/**
 * A directory's entries as fd_readdir lists them: `.` and `..`, then the rest in the order the
 * host gives them, each with its inode and type (a symlink is a symlink).
 * @param {typeof import('node:fs')} fs
 * @param {string} host
 * @param {boolean} mountRoot `..` of a mount's root is outside it: it is given the root's own inode
 * @returns {Array<{ name: Buffer, ino: bigint, type: number }>}
 */
function list(fs, host, mountRoot) {
  const self = fs.statSync(host, { bigint: true }).ino;
  const parent = mountRoot ? self : (quietly(() => fs.statSync(`${host}/..`, { bigint: true }))?.ino ?? 0n);
  const entries = [
    { name: Buffer.from('.'), ino: self, type: FILETYPE.DIR },
    { name: Buffer.from('..'), ino: parent, type: FILETYPE.DIR },
  ];
  for (const e of fs.readdirSync(host, { withFileTypes: true, encoding: 'buffer' })) {
    const type = e.isFile()
      ? FILETYPE.FILE
      : e.isDirectory()
        ? FILETYPE.DIR
        : e.isSymbolicLink()
          ? FILETYPE.SYMLINK
          : e.isCharacterDevice()
            ? FILETYPE.CHAR
            : e.isBlockDevice()
              ? FILETYPE.BLOCK
              : e.isSocket()
                ? FILETYPE.STREAM
                : FILETYPE.UNKNOWN;
    const ino = quietly(() => fs.lstatSync(Buffer.concat([Buffer.from(`${host}/`), e.name]), { bigint: true }))?.ino ?? 0n;
    entries.push({ name: e.name, ino, type });
  }
  return entries;
}

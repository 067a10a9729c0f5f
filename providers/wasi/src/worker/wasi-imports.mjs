// Wrappers around node:wasi's preview1 imports, run inside the container's worker.
// Plain JavaScript: workers start without a TypeScript loader (see README.md).
//
//  - stdio capture: fd_write on fds 1 and 2 goes to the CRI log writer.
//  - read-only mounts: writes under a read-only preopen fail with EROFS.
//  - path confinement: a path (symlinks included) must resolve inside its mount.
//  - interruptible sleep: clock-only poll_oneoff waits on a shared Int32Array,
//    so stop() can wake a sleeping module (a blocking uvwasi sleep cannot be
//    interrupted by worker.terminate()).

/** WASI preview1 errno values used here. */
export const ERRNO = { SUCCESS: 0, BADF: 8, FAULT: 21, INVAL: 28, LOOP: 32, NOTCAPABLE: 76, ROFS: 69 };

const OFLAGS_CREAT = 1;
const OFLAGS_TRUNC = 8;
const right = (bit) => 1n << BigInt(bit);
// Rights that would let a descriptor change what it refers to.
const WRITE_DATA = right(6) | right(8) | right(22); // fd_write, fd_allocate, fd_filestat_set_size
const MUTATING = WRITE_DATA | right(0) | right(9) | right(10) | right(12) | right(16) | right(17) |
  right(19) | right(20) | right(23) | right(24) | right(25) | right(26);

/**
 * Captures output written to fds 1 and 2 into `log` (a CriLogWriter). Closing
 * or renumbering over those fds stops the capture for them.
 * @param {Record<string, Function>} w the wasi_snapshot_preview1 import object (edited in place)
 * @param {() => WebAssembly.Memory} mem
 * @param {{ write(stream: string, chunk: Uint8Array): void }} log
 * @param {(msg: string) => void} warn called once if the log cannot be written
 */
export function captureStdio(w, mem, log, warn) {
  const captured = new Map([[1, 'stdout'], [2, 'stderr']]);
  const fdWrite = w.fd_write;
  let failed = false;
  w.fd_write = (fd, iovs, iovsLen, nwrittenPtr) => {
    const stream = captured.get(fd);
    if (stream === undefined) return fdWrite(fd, iovs, iovsLen, nwrittenPtr);
    const buf = mem().buffer;
    const dv = new DataView(buf);
    const u8 = new Uint8Array(buf);
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
    if (total > 0) {
      try {
        log.write(stream, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total));
      } catch (e) {
        // Lost log output must not kill the container (containerd drops it too).
        if (!failed) warn(`cannot write container log: ${e instanceof Error ? e.message : String(e)}`);
        failed = true;
      }
    }
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
 * @param {Record<string, Function>} w the wasi_snapshot_preview1 import object (edited in place)
 * @param {() => WebAssembly.Memory} mem
 * @param {Iterable<number>} readOnlyFds preopen descriptors of read-only mounts
 */
export function guardReadOnly(w, mem, readOnlyFds) {
  const ro = new Set(readOnlyFds);
  if (ro.size === 0) return;
  const deny = (name, ...fdArgs) => {
    const orig = w[name];
    w[name] = (...args) => (fdArgs.some((i) => ro.has(args[i])) ? ERRNO.ROFS : orig(...args));
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
    const rc = pathOpen(dirfd, dirflags, path, pathLen, oflags,
      BigInt(rightsBase) & ~MUTATING, BigInt(rightsInh) & ~MUTATING, fdflags, fdPtr);
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
 * to. uvwasi checks paths lexically and follows symlinks in intermediate
 * components without checking where they lead (measured: with `vol/l -> /etc`,
 * opening `l/hostname` read the host's /etc/hostname). So before each path
 * call the path is resolved here the way the kernel will, component by
 * component, following symlinks (the last one only when the call follows it),
 * and the call fails with ENOTCAPABLE unless the result lies inside the
 * mount's real host path. Absolute paths are refused (wasi-libc never sends
 * them). Residual risk: another writer of the same host directory could swap a
 * symlink between this check and the call (the module itself cannot: WASI
 * calls are synchronous and modules are single-threaded).
 * @param {Record<string, Function>} w the wasi_snapshot_preview1 import object (edited in place)
 * @param {() => WebAssembly.Memory} mem
 * @param {Array<{ fd: number, hostPath: string }>} preopens
 * @param {{ realpathSync: Function, lstatSync: Function, readlinkSync: Function }} fs node:fs
 */
export function confinePaths(w, mem, preopens, fs) {
  /** fd -> { root, dir }: the mount's real host path and the directory the fd is. */
  const dirs = new Map();
  for (const p of preopens) {
    const root = fs.realpathSync(p.hostPath);
    dirs.set(p.fd, { root, dir: root });
  }
  const text = (ptr, len) => Buffer.from(mem().buffer, ptr, len).toString('utf8');

  // errno, or the resolved host path when it stays inside the mount.
  const resolve = (fd, ptr, len, followLast) => {
    const d = dirs.get(fd);
    if (d === undefined) return { errno: ERRNO.SUCCESS }; // not a directory we know: uvwasi answers
    let rel;
    try { rel = text(ptr, len); } catch { return { errno: ERRNO.FAULT }; }
    if (rel.startsWith('/')) return { errno: ERRNO.NOTCAPABLE };
    const todo = rel.split('/').reverse();
    let cur = d.dir;
    let hops = 0;
    let missing = false; // past a component that does not exist: the rest is only lexical
    while (todo.length > 0) {
      const comp = todo.pop();
      if (comp === '' || comp === '.') continue;
      if (comp === '..') { cur = cur.slice(0, cur.lastIndexOf('/')) || '/'; continue; }
      const next = cur === '/' ? `/${comp}` : `${cur}/${comp}`;
      const last = !todo.some((c) => c !== '' && c !== '.');
      if (missing || (last && !followLast)) { cur = next; continue; }
      let st;
      try { st = fs.lstatSync(next); } catch { missing = true; cur = next; continue; }
      if (!st.isSymbolicLink()) { cur = next; continue; }
      if (++hops > 40) return { errno: ERRNO.LOOP };
      const target = fs.readlinkSync(next);
      if (target.startsWith('/')) cur = '/';
      todo.push(...target.split('/').reverse());
    }
    const inside = cur === d.root || cur.startsWith(d.root === '/' ? '/' : `${d.root}/`);
    return inside ? { errno: ERRNO.SUCCESS, path: cur, root: d.root } : { errno: ERRNO.NOTCAPABLE };
  };
  const FOLLOW = 1;
  const check = (name, ...specs) => {
    const orig = w[name];
    w[name] = (...a) => {
      for (const [fdI, ptrI, lenI, follow] of specs) {
        const r = resolve(a[fdI], a[ptrI], a[lenI], typeof follow === 'number' ? (a[follow] & FOLLOW) !== 0 : follow);
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

  const pathOpen = w.path_open;
  w.path_open = (dirfd, dirflags, path, pathLen, oflags, rightsBase, rightsInh, fdflags, fdPtr) => {
    const r = resolve(dirfd, path, pathLen, (dirflags & FOLLOW) !== 0);
    if (r.errno !== ERRNO.SUCCESS) return r.errno;
    const rc = pathOpen(dirfd, dirflags, path, pathLen, oflags, rightsBase, rightsInh, fdflags, fdPtr);
    if (rc === ERRNO.SUCCESS && r.path !== undefined) {
      dirs.set(new DataView(mem().buffer).getUint32(fdPtr, true), { root: r.root, dir: r.path });
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
}

/**
 * Keeps the set of open descriptors (preopens and what path_open returned) so
 * that they can be closed when the module ends: uvwasi does not close them
 * when the worker goes away (measured: one leaked directory fd per mount per
 * container), and they are not fds Node's trackUnmanagedFds knows about.
 * @param {Record<string, Function>} w the wasi_snapshot_preview1 import object (edited in place)
 * @param {() => WebAssembly.Memory} mem
 * @param {number[]} preopenFds
 * @returns {() => void} closes every descriptor still open
 */
export function trackDescriptors(w, mem, preopenFds) {
  const open = new Set(preopenFds);
  const close = w.fd_close;
  const pathOpen = w.path_open;
  w.path_open = (...a) => {
    const rc = pathOpen(...a);
    if (rc === ERRNO.SUCCESS) open.add(new DataView(mem().buffer).getUint32(a[8], true));
    return rc;
  };
  w.fd_close = (fd) => {
    const rc = close(fd);
    if (rc === ERRNO.SUCCESS) open.delete(fd);
    return rc;
  };
  const fdRenumber = w.fd_renumber;
  w.fd_renumber = (from, to) => {
    const rc = fdRenumber(from, to);
    if (rc === ERRNO.SUCCESS && open.delete(from)) open.add(to);
    return rc;
  };
  return () => {
    for (const fd of open) close(fd);
    open.clear();
  };
}

/**
 * Makes every import throw {@link StoppedError} once `control[0]` is set, so
 * a module that is doing I/O unwinds (and cleans up) as soon as it is stopped.
 * `onCall`, if given, runs before each import (the memory-size report of
 * {@link publishMemory}).
 * @param {Record<string, Function>} w the wasi_snapshot_preview1 import object (edited in place)
 * @param {Int32Array} control shared with the main thread
 * @param {() => void} [onCall]
 */
export function stopOnRequest(w, control, onCall) {
  for (const [name, fn] of Object.entries(w)) {
    if (name === 'proc_exit' || typeof fn !== 'function') continue;
    w[name] = onCall
      ? (...a) => {
        if (Atomics.load(control, 0) !== 0) throw new StoppedError();
        onCall();
        return fn(...a);
      }
      : (...a) => {
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
  return () => { slot[0] = mem()?.buffer.byteLength ?? 0; };
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
 * still go to node:wasi.
 * @param {Record<string, Function>} w the wasi_snapshot_preview1 import object (edited in place)
 * @param {() => WebAssembly.Memory} mem
 * @param {Int32Array} control shared with the main thread
 */
export function interruptibleSleep(w, mem, control) {
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
      deadlines.push({ userdata: dv.getBigUint64(base, true), clock, at: abs ? timeout : now(clock) + timeout });
    }
    let due = [];
    for (;;) {
      if (Atomics.load(control, 0) !== 0) throw new StoppedError();
      due = deadlines.filter((d) => d.at <= now(d.clock));
      if (due.length > 0) break;
      const waitNs = deadlines.reduce((m, d) => { const r = d.at - now(d.clock); return r < m ? r : m; }, 2n ** 63n);
      Atomics.wait(control, 0, 0, Math.max(1, Math.ceil(Number(waitNs) / 1e6)));
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

// CLOCK_REALTIME (0) and CLOCK_MONOTONIC (1) in nanoseconds, as uvwasi reads them.
function now(clock) {
  if (clock === 1) return process.hrtime.bigint();
  return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e3)) * 1000n;
}

// Wrappers around node:wasi's preview1 imports, run inside the container's worker.
// Plain JavaScript: workers start without a TypeScript loader (see README.md).
//
//  - stdio capture: fd_write on fds 1 and 2 goes to the CRI log writer.
//  - read-only mounts: writes under a read-only preopen fail with EROFS.
//  - interruptible sleep: clock-only poll_oneoff waits on a shared Int32Array,
//    so stop() can wake a sleeping module (a blocking uvwasi sleep cannot be
//    interrupted by worker.terminate()).

/** WASI preview1 errno values used here. */
export const ERRNO = { SUCCESS: 0, BADF: 8, FAULT: 21, INVAL: 28, NOTCAPABLE: 76, ROFS: 69 };

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

// Pre-opened listening sockets for WASI preview1 modules (wasmtime's
// `--tcplisten` convention), run inside the container's worker.
// Plain JavaScript: workers start without a TypeScript loader (see README.md);
// typed with JSDoc. Hand-written: no npm library implements preview1's sock_* calls over node:net.
//
// Descriptors: each listener takes the descriptor after stdio and the
// preopened directories (in port order). The slot is reserved in uvwasi's
// descriptor table with a preopen of an empty directory, so uvwasi never hands
// the number out again; every call on it is answered here (fd_prestat_get says
// EBADF: the end of the directory preopens, as wasmtime does). An accepted
// connection likewise reserves the lowest free slot (uvwasi's path_open of "."
// below the listener's empty directory), so its number is what POSIX would give.
//
// Blocking: the calls that may wait (sock_accept, sock_recv, sock_send, fd_read,
// fd_write, poll_oneoff on a socket) return a Promise, and the worker passes
// them to the module as `WebAssembly.Suspending` imports with `_start` called
// through `WebAssembly.promising` (JSPI): the module's stack is suspended while
// the worker's own event loop does the I/O with node:net. A call that can
// answer at once returns a number (no suspension).
//
// A connection's states:
//
//   accepted ──'end'──► eof (recv returns 0) ──fd_close──► closed
//      │ sock_shutdown(WR)  : the write side ends (FIN), reads go on
//      │ sock_shutdown(RD)  : reads return 0
//      └──'error'──► broken: recv ECONNRESET, send EPIPE ──fd_close──► closed
import { clockNow as now } from './wasi-imports.mjs';
/** @import { Socket } from 'node:net' */
/** @import { Answer, Preview1 } from './preview1.ts' */
/** @import { Listener } from './wasi-listen.mjs' */

/**
 * A pre-opened listener's descriptor.
 * @typedef {{ kind: 'listener', l: Listener, nonblock: boolean, waiters: Set<() => void> }} ListenerSock
 */
/**
 * An accepted connection's descriptor: what it received and the module has not read yet.
 * @typedef {{ kind: 'conn', socket: Socket, chunks: Buffer[], bytes: number, eof: boolean, err: Error | undefined,
 *   readShut: boolean, nonblock: boolean, waiters: Set<() => void> }} ConnSock
 */
/** @typedef {ListenerSock | ConnSock} Sock */
/**
 * A poll_oneoff subscription: on a clock (a deadline) or on a descriptor (a socket of ours or not).
 * @typedef {{ kind: 'clock', userdata: bigint, tag: number, clock: number, at: bigint }
 *   | { kind: 'fd', userdata: bigint, tag: number, fd: number, s: Sock | undefined }} Sub
 */
/** @typedef {{ sub: Sub, error: number, nbytes: bigint, flags: number }} PollEvent */

/** preview1 errno values used here. */
const E = { SUCCESS: 0, AGAIN: 6, BADF: 8, CONNRESET: 15, FAULT: 21, INVAL: 28, NOTCONN: 53, NOTDIR: 54, NOTSUP: 58, PIPE: 64, SPIPE: 70 };
const FILETYPE_SOCKET_STREAM = 6;
const FDFLAGS_NONBLOCK = 4;
const RIFLAGS_PEEK = 1;
const RIFLAGS_WAITALL = 2;
const SDFLAGS_RD = 1;
const SDFLAGS_WR = 2;
const EVENTTYPE_CLOCK = 0;
const EVENTTYPE_FD_READ = 1;
const EVENTTYPE_FD_WRITE = 2;
const EVENT_FD_READWRITE_HANGUP = 1;
/** fd_read, fd_fdstat_set_flags, fd_write, fd_filestat_get, poll_fd_readwrite, sock_shutdown, sock_accept */
const SOCKET_RIGHTS = (1n << 1n) | (1n << 3n) | (1n << 6n) | (1n << 21n) | (1n << 27n) | (1n << 28n) | (1n << 29n);
/** Bytes buffered from a connection before it is paused (the module reads them). */
const READ_HIGH_WATER = 64 * 1024;
/** Bytes queued for sending beyond which a send waits (or says EAGAIN when non-blocking). */
const WRITE_HIGH_WATER = 64 * 1024;

/** The imports that may return a Promise (the worker wraps them in WebAssembly.Suspending). */
export const SOCKET_ASYNC_IMPORTS = ['sock_accept', 'sock_recv', 'sock_send', 'fd_read', 'fd_write', 'poll_oneoff'];

/**
 * Serves the socket calls of the module on the pre-opened `listeners`, whose
 * descriptors are `fds` (reserved in uvwasi's table, see above).
 * @param {Preview1} w the wasi_snapshot_preview1 import object (edited in place)
 * @param {() => WebAssembly.Memory} mem
 * @param {Listener[]} listeners
 * @param {number[]} fds their descriptors
 * @param {Promise<never>} stopped rejects (StoppedError) once the container is being stopped
 * @returns {() => void} closes every listener and connection
 */
export function preopenSockets(w, mem, listeners, fds, stopped) {
  /** @type {Map<number, Sock>} fd -> socket state */
  const socks = new Map();
  const orig = { ...w };
  stopped.catch(() => {});
  listeners.forEach((l, i) => {
    /** @type {ListenerSock} */
    const s = { kind: 'listener', l, nonblock: false, waiters: new Set() };
    l.onChange = () => wake(s);
    socks.set(fds[i], s);
  });

  const wake = (/** @type {Sock} */ s) => {
    for (const r of s.waiters) r();
    s.waiters.clear();
  };
  /**
   * Resolves at the next change of any of `ss`, or at `ms` (when given); rejects when stopped.
   * @param {Sock[]} ss
   * @param {number} [ms]
   * @returns {Promise<void>}
   */
  const change = (ss, ms) =>
    Promise.race([
      stopped,
      new Promise((/** @type {(v?: undefined) => void} */ resolve) => {
        const done = () => {
          clearTimeout(timer);
          for (const s of ss) s.waiters.delete(done);
          resolve();
        };
        const timer = ms === undefined ? undefined : setTimeout(done, ms);
        for (const s of ss) s.waiters.add(done);
      }),
    ]);

  /**
   * @param {Socket} socket
   * @param {boolean} nonblock
   */
  const adopt = (socket, nonblock) => {
    /** @type {ConnSock} */
    const s = { kind: 'conn', socket, chunks: [], bytes: 0, eof: false, err: undefined, readShut: false, nonblock, waiters: new Set() };
    socket.removeAllListeners('error');
    socket.on('data', (/** @type {Buffer} */ b) => {
      s.chunks.push(b);
      s.bytes += b.length;
      if (s.bytes >= READ_HIGH_WATER) socket.pause();
      wake(s);
    });
    socket.on('end', () => {
      s.eof = true;
      wake(s);
    });
    socket.on('error', (e) => {
      s.err = e;
      wake(s);
    });
    socket.on('drain', () => wake(s));
    socket.on('close', () => wake(s));
    socket.resume();
    return s;
  };

  const readable = (/** @type {Sock} */ s) => (s.kind === 'listener' ? s.l.pending.length > 0 : s.bytes > 0 || s.eof || s.readShut || s.err !== undefined);
  const writable = (/** @type {Sock} */ s) =>
    s.kind === 'conn' && (s.err !== undefined || s.socket.writableEnded || s.socket.writableLength < WRITE_HIGH_WATER);

  /**
   * Copies up to the iovecs' room from the connection's buffer (consumed unless peek).
   * @param {ConnSock} s
   * @param {number} iovs
   * @param {number} iovsLen
   * @param {number} peek non-zero: leave the bytes there
   * @returns {number} bytes copied, -1 for an iovec outside the memory
   */
  const take = (s, iovs, iovsLen, peek) => {
    const dv = new DataView(mem().buffer);
    const u8 = new Uint8Array(mem().buffer);
    let n = 0;
    let ci = 0;
    let off = 0;
    for (let i = 0; i < iovsLen && ci < s.chunks.length; i++) {
      let ptr = dv.getUint32(iovs + 8 * i, true);
      let len = dv.getUint32(iovs + 8 * i + 4, true);
      if (ptr + len > u8.length) return -1;
      while (len > 0 && ci < s.chunks.length) {
        const c = s.chunks[ci];
        const k = Math.min(len, c.length - off);
        u8.set(c.subarray(off, off + k), ptr);
        ptr += k;
        len -= k;
        n += k;
        off += k;
        if (off === c.length) {
          ci++;
          off = 0;
        }
      }
    }
    if (!peek) {
      s.chunks.splice(0, ci);
      if (off > 0) s.chunks[0] = s.chunks[0].subarray(off);
      s.bytes -= n;
      if (s.bytes < READ_HIGH_WATER && s.socket.isPaused()) s.socket.resume();
    }
    return n;
  };
  const room = (/** @type {number} */ iovs, /** @type {number} */ iovsLen) => {
    const dv = new DataView(mem().buffer);
    let n = 0;
    for (let i = 0; i < iovsLen; i++) n += dv.getUint32(iovs + 8 * i + 4, true);
    return n;
  };

  /**
   * @param {Sock} s
   * @param {number} iovs
   * @param {number} iovsLen
   * @param {number} flags riflags
   * @param {number} nPtr
   * @returns {Answer}
   */
  const recv = (s, iovs, iovsLen, flags, nPtr) => {
    if (s.kind !== 'conn') return E.NOTCONN;
    const want = room(iovs, iovsLen);
    const finish = (/** @type {number} */ n) => {
      if (n < 0) return E.FAULT;
      new DataView(mem().buffer).setUint32(nPtr, n, true);
      return E.SUCCESS;
    };
    const ready = () => (s.readShut ? true : flags & RIFLAGS_WAITALL ? s.bytes >= want || s.eof || s.err !== undefined : readable(s));
    if (ready()) {
      if (s.readShut) return finish(0);
      if (s.bytes === 0 && s.err !== undefined && !s.eof) return E.CONNRESET;
      return finish(take(s, iovs, iovsLen, flags & RIFLAGS_PEEK));
    }
    if (s.nonblock) return E.AGAIN;
    return (async () => {
      while (!ready()) await change([s]);
      if (s.readShut) return finish(0);
      if (s.bytes === 0 && s.err !== undefined && !s.eof) return E.CONNRESET;
      return finish(take(s, iovs, iovsLen, flags & RIFLAGS_PEEK));
    })();
  };

  /**
   * @param {Sock} s
   * @param {number} iovs
   * @param {number} iovsLen
   * @param {number} nPtr
   * @returns {Answer}
   */
  const send = (s, iovs, iovsLen, nPtr) => {
    if (s.kind !== 'conn') return E.NOTCONN;
    if (s.err !== undefined || s.socket.writableEnded || s.socket.destroyed) return E.PIPE;
    if (!writable(s)) {
      if (s.nonblock) return E.AGAIN;
      return (async () => {
        while (!writable(s)) await change([s]);
        return send(s, iovs, iovsLen, nPtr);
      })();
    }
    const dv = new DataView(mem().buffer);
    const u8 = new Uint8Array(mem().buffer);
    /** @type {Buffer[]} */
    const parts = [];
    let n = 0;
    for (let i = 0; i < iovsLen; i++) {
      const ptr = dv.getUint32(iovs + 8 * i, true);
      const len = dv.getUint32(iovs + 8 * i + 4, true);
      if (ptr + len > u8.length) return E.FAULT;
      if (len > 0) parts.push(Buffer.from(u8.subarray(ptr, ptr + len))); // a copy: memory may change before it is sent
      n += len;
    }
    if (n > 0) s.socket.write(parts.length === 1 ? parts[0] : Buffer.concat(parts, n));
    dv.setUint32(nPtr, n, true);
    return E.SUCCESS;
  };

  const closeSock = (/** @type {Sock} */ s) => {
    if (s.kind === 'listener') {
      s.l.server.close();
      for (const p of s.l.pending.splice(0)) p.destroy();
    } else {
      s.socket.destroySoon(); // what was sent is flushed, then the socket is closed
    }
    wake(s);
  };

  const get = (/** @type {number} */ fd) => socks.get(fd);
  /**
   * Answers `name` for our descriptors with `fn` (its first argument the descriptor's state, then the call's other
   * arguments); other descriptors go to node:wasi.
   * @param {string} name
   * @param {(s: Sock, ...a: number[]) => Answer} fn
   */
  const on = (name, fn) => {
    const o = orig[name];
    if (typeof o !== 'function') return;
    w[name] = (/** @type {number} */ fd, /** @type {number[]} */ ...a) => {
      const s = get(fd);
      return s === undefined ? o(fd, ...a) : fn(s, ...a);
    };
  };

  w.sock_accept = (/** @type {number} */ fd, /** @type {number} */ flags, /** @type {number} */ fdPtr) => {
    const s = get(fd);
    if (s === undefined) return orig.sock_accept(fd, flags, fdPtr);
    if (s.kind !== 'listener') return E.INVAL;
    const accept = () => {
      const socket = /** @type {Socket} */ (s.l.pending.shift()); // called only with one pending
      // Reserve uvwasi's lowest free slot: "." below the listener's empty directory,
      // the path written where the new descriptor goes (uvwasi reads it first).
      new Uint8Array(mem().buffer)[fdPtr] = 0x2e;
      const rc = orig.path_open(fd, 0, fdPtr, 1, 0, 0n, 0n, 0, fdPtr);
      if (rc !== E.SUCCESS) {
        socket.destroy();
        return rc;
      }
      const newFd = new DataView(mem().buffer).getUint32(fdPtr, true);
      socks.set(newFd, adopt(socket, (flags & FDFLAGS_NONBLOCK) !== 0));
      return E.SUCCESS;
    };
    if (s.l.pending.length > 0) return accept();
    if (s.nonblock || flags & FDFLAGS_NONBLOCK) return E.AGAIN;
    return (async () => {
      while (s.l.pending.length === 0) await change([s]);
      return accept();
    })();
  };
  on('sock_recv', (s, iovs, iovsLen, flags, nPtr, roFlagsPtr) => {
    const finish = (/** @type {number} */ rc) => {
      if (rc === E.SUCCESS) new DataView(mem().buffer).setUint16(roFlagsPtr, 0, true);
      return rc;
    };
    const rc = recv(s, iovs, iovsLen, flags, nPtr);
    return typeof rc === 'number' ? finish(rc) : rc.then(finish);
  });
  on('sock_send', (s, iovs, iovsLen, _flags, nPtr) => send(s, iovs, iovsLen, nPtr));
  on('sock_shutdown', (s, how) => {
    if (s.kind !== 'conn') return E.NOTCONN;
    if ((how & (SDFLAGS_RD | SDFLAGS_WR)) === 0) return E.INVAL;
    if (how & SDFLAGS_RD) {
      s.readShut = true;
      s.chunks = [];
      s.bytes = 0;
    }
    if (how & SDFLAGS_WR && !s.socket.writableEnded) s.socket.end();
    wake(s);
    return E.SUCCESS;
  });
  on('fd_read', (s, iovs, iovsLen, nPtr) => recv(s, iovs, iovsLen, 0, nPtr));
  on('fd_write', (s, iovs, iovsLen, nPtr) => send(s, iovs, iovsLen, nPtr));
  on('fd_close', (s) => {
    const fd = /** @type {[number, Sock]} */ ([...socks].find(([, v]) => v === s))[0]; // on() found it by its fd
    const rc = orig.fd_close(fd); // fd_close(fd) has no other argument
    socks.delete(fd);
    closeSock(s);
    return rc;
  });
  on('fd_fdstat_get', (s, ptr) => {
    const dv = new DataView(mem().buffer);
    dv.setUint8(ptr, FILETYPE_SOCKET_STREAM);
    dv.setUint16(ptr + 2, s.nonblock ? FDFLAGS_NONBLOCK : 0, true);
    dv.setBigUint64(ptr + 8, SOCKET_RIGHTS, true);
    dv.setBigUint64(ptr + 16, 0n, true);
    return E.SUCCESS;
  });
  on('fd_fdstat_set_flags', (s, flags) => {
    if (flags & ~FDFLAGS_NONBLOCK) return E.NOTSUP;
    s.nonblock = (flags & FDFLAGS_NONBLOCK) !== 0;
    return E.SUCCESS;
  });
  on('fd_filestat_get', (_s, ptr) => {
    const u8 = new Uint8Array(mem().buffer, ptr, 64);
    u8.fill(0);
    u8[16] = FILETYPE_SOCKET_STREAM;
    return E.SUCCESS;
  });
  on('fd_prestat_get', () => E.BADF);
  on('fd_prestat_dir_name', () => E.BADF);
  for (const name of ['fd_seek', 'fd_tell', 'fd_pread', 'fd_pwrite']) on(name, () => E.SPIPE);
  for (const name of [
    'fd_readdir',
    'path_create_directory',
    'path_filestat_get',
    'path_filestat_set_times',
    'path_link',
    'path_open',
    'path_readlink',
    'path_remove_directory',
    'path_rename',
    'path_unlink_file',
  ]) {
    on(name, () => E.NOTDIR);
  }
  for (const name of [
    'fd_advise',
    'fd_allocate',
    'fd_datasync',
    'fd_sync',
    'fd_fdstat_set_rights',
    'fd_filestat_set_size',
    'fd_filestat_set_times',
    'fd_renumber',
  ]) {
    on(name, () => E.NOTSUP);
  }
  // fd_renumber onto a socket descriptor would make uvwasi close its slot under it.
  const renumber = w.fd_renumber;
  w.fd_renumber = (from, to) => (socks.has(to) ? E.NOTSUP : renumber(from, to));

  const pollOneoff = orig.poll_oneoff;
  w.poll_oneoff = (inPtr, outPtr, nsubs, neventsPtr) => {
    /** @type {Sub[]} */
    const subs = [];
    let mine = false;
    {
      const dv = new DataView(mem().buffer);
      for (let i = 0; i < nsubs; i++) {
        const base = inPtr + 48 * i;
        const tag = dv.getUint8(base + 8);
        const userdata = dv.getBigUint64(base, true);
        if (tag === EVENTTYPE_CLOCK) {
          const timeout = dv.getBigUint64(base + 24, true);
          const abs = (dv.getUint16(base + 40, true) & 1) !== 0;
          const clock = dv.getUint32(base + 16, true);
          subs.push({ kind: 'clock', userdata, tag, clock, at: abs ? timeout : now(clock) + timeout });
        } else {
          const fd = dv.getUint32(base + 16, true);
          const s = get(fd);
          if (s) mine = true;
          subs.push({ kind: 'fd', userdata, tag, fd, s });
        }
      }
    }
    if (!mine) return pollOneoff(inPtr, outPtr, nsubs, neventsPtr);
    // Other descriptors (files, stdio) are always ready, as uvwasi reports regular files.
    const events = () => {
      /** @type {PollEvent[]} */
      const out = [];
      for (const sub of subs) {
        if (sub.kind === 'clock') {
          if (sub.at <= now(sub.clock)) out.push({ sub, error: 0, nbytes: 0n, flags: 0 });
        } else if (sub.tag !== EVENTTYPE_FD_READ && sub.tag !== EVENTTYPE_FD_WRITE) {
          out.push({ sub, error: E.INVAL, nbytes: 0n, flags: 0 });
        } else if (sub.s === undefined) {
          out.push({ sub, error: 0, nbytes: 0n, flags: 0 });
        } else if (sub.tag === EVENTTYPE_FD_READ && readable(sub.s)) {
          const s = sub.s;
          const nbytes = BigInt(s.kind === 'listener' ? s.l.pending.length : s.bytes);
          out.push({ sub, error: 0, nbytes, flags: s.kind === 'conn' && (s.eof || s.err) ? EVENT_FD_READWRITE_HANGUP : 0 });
        } else if (sub.tag === EVENTTYPE_FD_WRITE && (sub.s.kind === 'listener' || writable(sub.s))) {
          const s = sub.s;
          const error = s.kind === 'listener' ? E.NOTCONN : s.err !== undefined || s.socket.writableEnded ? E.PIPE : 0;
          out.push({ sub, error, nbytes: BigInt(s.kind === 'conn' ? Math.max(0, WRITE_HIGH_WATER - s.socket.writableLength) : 0), flags: 0 });
        }
      }
      return out;
    };
    const finish = (/** @type {PollEvent[]} */ out) => {
      const dv = new DataView(mem().buffer);
      out.forEach((ev, k) => {
        const base = outPtr + 32 * k;
        dv.setBigUint64(base, ev.sub.userdata, true);
        dv.setUint16(base + 8, ev.error, true);
        dv.setUint8(base + 10, ev.sub.tag);
        dv.setBigUint64(base + 16, ev.nbytes, true);
        dv.setUint16(base + 24, ev.flags, true);
      });
      dv.setUint32(neventsPtr, out.length, true);
      return E.SUCCESS;
    };
    const first = events();
    if (first.length > 0) return finish(first);
    const watched = subs.flatMap((s) => (s.kind === 'fd' && s.s !== undefined ? [s.s] : []));
    return (async () => {
      for (;;) {
        const clocks = subs.flatMap((s) => (s.kind === 'clock' ? [s] : []));
        const ms = clocks.length === 0 ? undefined : Math.max(0, Math.min(...clocks.map((c) => Math.ceil(Number(c.at - now(c.clock)) / 1e6))));
        await change(watched, ms);
        const out = events();
        if (out.length > 0) return finish(out);
      }
    })();
  };

  return () => {
    for (const s of socks.values()) {
      if (s.kind === 'conn') s.socket.destroy();
      else closeSock(s);
    }
    socks.clear();
  };
}

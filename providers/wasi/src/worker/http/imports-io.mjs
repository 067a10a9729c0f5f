// The core-level imports of wasi:io, wasi:clocks, wasi:random and wasi:cli for one instance
// (see canon.mjs): each function takes and returns the flat values of the canonical ABI, with a
// return pointer last where the results do not fit one value. The blocking functions return a
// promise when they must wait; host-imports.mjs wraps them as JSPI `Suspending` imports.
// Plain JavaScript, typed with JSDoc.
import { randomFillSync } from 'node:crypto';
import { HostTrap } from './canon.mjs';
import { EmptyInput, InputStream, IoError, LogOutput, OutputStream, Pollable, readyPollable, StreamError, timerPollable } from './streams.mjs';
/** @import { Guest } from './canon.mjs' */

/** wasi:cli/exit was called: the request's instance ends. */
export class GuestExit extends Error {
  /** @param {number} code */
  constructor(code) {
    super(`the component called wasi:cli/exit with ${code}`);
    this.name = 'GuestExit';
    this.code = code;
  }
}

/**
 * @typedef {(...args: any[]) => unknown} CoreFunction
 * @typedef {{ env: ReadonlyArray<readonly [string, string]>, args: readonly string[], stdout: (b: Uint8Array) => void, stderr: (b: Uint8Array) => void, route?: RouteClient, outbound?: OutboundCheck, platform?: Platform }} CliContext
 *   the instance's world: its environment, arguments and output, where its outgoing requests
 *   connect (`route`: the node's Services; absent: as given) and may go (`outbound`: the pod's
 *   allow-list; absent: anywhere), and its configuration and key-value stores (`platform`; absent: none)
 */
/** @import { OutboundCheck } from './http-types.mjs' */
/** @import { RouteClient } from '../service-route.mjs' */
/** @import { Platform } from '../platform/platform-imports.mjs' */

/** Largest u64 a read may ask for, as a length the host honours. @param {bigint} n */
const clampLen = (n) => Number(BigInt.asUintN(64, n) > 0x7fffffffn ? 0x7fffffffn : BigInt.asUintN(64, n));

/**
 * Stores a stream error at `ret`: result tag 1, then at `off` the stream-error case
 * (0 last-operation-failed with its error's handle at off+4, 1 closed).
 * @param {Guest} g @param {number} ret @param {number} off @param {StreamError} e
 */
function storeStreamError(g, ret, off, e) {
  const dv = g.view();
  dv.setUint8(ret, 1);
  if (e.error) {
    const h = g.table.add(e.error);
    dv.setUint8(ret + off, 0);
    dv.setUint32(ret + off + 4, h, true);
  } else dv.setUint8(ret + off, 1);
}

/**
 * Runs `op` and stores its outcome as `result<T, stream-error>` at `ret` (`ok` stores T), or the
 * stream error it threw.
 * @param {Guest} g @param {number} ret @param {number} off where the error payload goes
 * @param {() => void} op
 */
function streamResult(g, ret, off, op) {
  try {
    op();
  } catch (e) {
    if (!(e instanceof StreamError)) throw e;
    storeStreamError(g, ret, off, e);
  }
}

/** Waits until `p` is ready. @param {{ ready(): boolean, wait(): Promise<unknown> }} p @returns {Promise<void> | undefined} */
export function untilReady(p) {
  if (p.ready()) return undefined;
  return p.wait().then(() => untilReady(p));
}

/**
 * wasi:io/{error,poll,streams}.
 * @param {Guest} g
 * @returns {Record<string, CoreFunction>}
 */
export function ioImports(g) {
  const T = g.table;
  /** @param {Guest} g @param {number} ret @param {Uint8Array} bytes */
  const storeBytes = (g, ret, bytes) => {
    const [p, l] = g.putBytes(bytes);
    g.view().setUint8(ret, 0);
    g.putPtrLen(ret + 4, p, l);
  };
  /** @param {number} ret @param {number} n */
  const storeU64 = (ret, n) => {
    const dv = g.view();
    dv.setUint8(ret, 0);
    dv.setBigUint64(ret + 8, BigInt(n), true);
  };
  /** @param {number} ret */
  const storeUnit = (ret) => g.view().setUint8(ret, 0);
  /** @param {number} h @param {number} ptr @param {number} len @param {number} ret */
  const write = (h, ptr, len, ret) =>
    streamResult(g, ret, 4, () => {
      const s = T.get(h, OutputStream);
      const room = s.checkWrite();
      if (len > room) throw new HostTrap(`wrote ${len} bytes to an output stream that permitted ${room}`);
      s.write(g.bytes(ptr, len));
      storeUnit(ret);
    });
  /** @param {number} h @param {bigint} len @param {number} ret @param {number} off @param {(b: Uint8Array) => void} store */
  const read = (h, len, ret, off, store) =>
    streamResult(g, ret, off, () => {
      store(T.get(h, InputStream).read(clampLen(len)));
    });
  /** @param {OutputStream} s @param {number} ret @param {() => void} then */
  const afterFlush = (s, ret, then) => {
    const wait = untilReady(s);
    const done = () => streamResult(g, ret, 4, () => (s.checkWrite(), then()));
    if (!wait) return done();
    return wait.then(done);
  };
  return {
    'wasi:io/error#[resource-drop]error': (h) => void T.take(h, IoError),
    'wasi:io/error#[method]error.to-debug-string': (h, ret) => putStringAt(g, ret, T.get(h, IoError).message),
    'wasi:io/poll#[resource-drop]pollable': (h) => void T.take(h, Pollable),
    'wasi:io/poll#[method]pollable.ready': (h) => (T.get(h, Pollable).ready() ? 1 : 0),
    'wasi:io/poll#[method]pollable.block': (h) => untilReady(T.get(h, Pollable)),
    'wasi:io/poll#poll': (ptr, len, ret) => {
      if (len === 0) throw new HostTrap('poll of an empty list');
      const dv = g.view();
      const ps = Array.from({ length: len }, (_, i) => T.get(dv.getUint32(ptr + i * 4, true), Pollable));
      /** @returns {Promise<void> | undefined} */
      const answer = () => {
        const ready = ps.flatMap((p, i) => (p.ready() ? [i] : []));
        if (ready.length === 0) return Promise.race(ps.map((p) => p.wait())).then(answer);
        const out = g.alloc(4, ready.length * 4);
        const v = g.view();
        ready.forEach((i, k) => v.setUint32(out + k * 4, i, true));
        g.putPtrLen(ret, out, ready.length);
        return undefined;
      };
      return answer();
    },
    'wasi:io/streams#[resource-drop]input-stream': (h) => T.take(h, InputStream).close(),
    'wasi:io/streams#[method]input-stream.read': (h, len, ret) => read(h, len, ret, 4, (b) => storeBytes(g, ret, b)),
    'wasi:io/streams#[method]input-stream.blocking-read': (h, len, ret) => {
      const s = T.get(h, InputStream);
      const go = () => read(h, len, ret, 4, (b) => storeBytes(g, ret, b));
      const wait = untilReady(s);
      return wait ? wait.then(go) : go();
    },
    'wasi:io/streams#[method]input-stream.skip': (h, len, ret) => read(h, len, ret, 8, (b) => storeU64(ret, b.length)),
    'wasi:io/streams#[method]input-stream.blocking-skip': (h, len, ret) => {
      const s = T.get(h, InputStream);
      const go = () => read(h, len, ret, 8, (b) => storeU64(ret, b.length));
      const wait = untilReady(s);
      return wait ? wait.then(go) : go();
    },
    'wasi:io/streams#[method]input-stream.subscribe': (h) => {
      const s = T.get(h, InputStream);
      return T.add(
        new Pollable(
          () => s.ready(),
          () => s.wait(),
        ),
      );
    },
    'wasi:io/streams#[resource-drop]output-stream': (h) => T.take(h, OutputStream).close(),
    'wasi:io/streams#[method]output-stream.check-write': (h, ret) => streamResult(g, ret, 8, () => storeU64(ret, T.get(h, OutputStream).checkWrite())),
    'wasi:io/streams#[method]output-stream.write': write,
    'wasi:io/streams#[method]output-stream.blocking-write-and-flush': (h, ptr, len, ret) => {
      if (len > 4096) throw new HostTrap(`blocking-write-and-flush of ${len} bytes (at most 4096)`);
      const s = T.get(h, OutputStream);
      const go = () => {
        write(h, ptr, len, ret);
        if (g.view().getUint8(ret) !== 0) return undefined;
        return afterFlush(s, ret, () => storeUnit(ret));
      };
      const wait = untilReady(s);
      return wait ? wait.then(go) : go();
    },
    'wasi:io/streams#[method]output-stream.flush': (h, ret) => streamResult(g, ret, 4, () => (T.get(h, OutputStream).checkWrite(), storeUnit(ret))),
    'wasi:io/streams#[method]output-stream.blocking-flush': (h, ret) => afterFlush(T.get(h, OutputStream), ret, () => storeUnit(ret)),
    'wasi:io/streams#[method]output-stream.subscribe': (h) => {
      const s = T.get(h, OutputStream);
      return T.add(
        new Pollable(
          () => s.ready(),
          () => s.wait(),
        ),
      );
    },
    'wasi:io/streams#[method]output-stream.write-zeroes': (h, len, ret) =>
      streamResult(g, ret, 4, () => {
        const s = T.get(h, OutputStream);
        const n = clampLen(len);
        if (n > s.checkWrite()) throw new HostTrap('write-zeroes beyond what check-write permitted');
        s.write(new Uint8Array(n));
        storeUnit(ret);
      }),
    'wasi:io/streams#[method]output-stream.blocking-write-zeroes-and-flush': (h, len, ret) => {
      const s = T.get(h, OutputStream);
      const go = () => {
        streamResult(g, ret, 4, () => (s.write(new Uint8Array(clampLen(len))), storeUnit(ret)));
        if (g.view().getUint8(ret) !== 0) return undefined;
        return afterFlush(s, ret, () => storeUnit(ret));
      };
      const wait = untilReady(s);
      return wait ? wait.then(go) : go();
    },
    'wasi:io/streams#[method]output-stream.splice': (h, src, len, ret) =>
      streamResult(g, ret, 8, () => {
        const out = T.get(h, OutputStream);
        const n = Math.min(clampLen(len), out.checkWrite());
        const b = T.get(src, InputStream).read(n);
        out.write(b);
        storeU64(ret, b.length);
      }),
    'wasi:io/streams#[method]output-stream.blocking-splice': (h, src, len, ret) => {
      const out = T.get(h, OutputStream);
      const input = T.get(src, InputStream);
      const go = () =>
        streamResult(g, ret, 8, () => {
          const b = input.read(Math.min(clampLen(len), Math.max(1, out.checkWrite())));
          out.write(b);
          storeU64(ret, b.length);
        });
      const wait = Promise.all([untilReady(input), untilReady(out)]);
      return input.ready() && out.ready() ? go() : wait.then(go);
    },
  };
}

/** @param {Guest} g @param {number} ret @param {string} s */
function putStringAt(g, ret, s) {
  const [p, l] = g.putString(s);
  g.putPtrLen(ret, p, l);
}

/**
 * wasi:clocks, wasi:random, wasi:cli.
 * @param {Guest} g
 * @param {CliContext} cli
 * @returns {Record<string, CoreFunction>}
 */
export function systemImports(g, cli) {
  const T = g.table;
  /** @param {number} len */
  const random = (len) => randomFillSync(new Uint8Array(len));
  const u64 = () => random(8).reduce((a, b) => (a << 8n) | BigInt(b), 0n);
  /** @param {number} ret */
  const wallNow = (ret) => {
    const ns = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));
    const dv = g.view();
    dv.setBigUint64(ret, ns / 1_000_000_000n, true);
    dv.setUint32(ret + 8, Number(ns % 1_000_000_000n), true);
  };
  /** @param {number} ret */
  const none = (ret) => g.view().setUint8(ret, 0);
  return {
    'wasi:clocks/monotonic-clock#now': () => process.hrtime.bigint(),
    'wasi:clocks/monotonic-clock#resolution': () => 1n,
    'wasi:clocks/monotonic-clock#subscribe-instant': (at) => T.add(timerPollable(BigInt.asUintN(64, at))),
    'wasi:clocks/monotonic-clock#subscribe-duration': (d) => T.add(timerPollable(process.hrtime.bigint() + BigInt.asUintN(64, d))),
    'wasi:clocks/wall-clock#now': wallNow,
    'wasi:clocks/wall-clock#resolution': (ret) => {
      const dv = g.view();
      dv.setBigUint64(ret, 0n, true);
      dv.setUint32(ret + 8, 1000, true);
    },
    'wasi:random/random#get-random-bytes': (len, ret) => putBytesAt(g, ret, random(clampLen(len))),
    'wasi:random/random#get-random-u64': u64,
    'wasi:random/insecure#get-insecure-random-bytes': (len, ret) => putBytesAt(g, ret, random(clampLen(len))),
    'wasi:random/insecure#get-insecure-random-u64': u64,
    'wasi:random/insecure-seed#insecure-seed': (ret) => {
      const dv = g.view();
      dv.setBigUint64(ret, u64(), true);
      dv.setBigUint64(ret + 8, u64(), true);
    },
    'wasi:cli/environment#get-environment': (ret) => g.putPairs(ret, cli.env),
    'wasi:cli/environment#get-arguments': (ret) => {
      const base = g.alloc(4, cli.args.length * 8);
      cli.args.forEach((a, i) => {
        const [p, l] = g.putString(a);
        g.putPtrLen(base + i * 8, p, l);
      });
      g.putPtrLen(ret, base, cli.args.length);
    },
    'wasi:cli/environment#initial-cwd': (ret) => g.putOptionString(ret, '/'),
    'wasi:cli/exit#exit': (status) => {
      throw new GuestExit(status === 0 ? 0 : 1);
    },
    'wasi:cli/exit#exit-with-code': (code) => {
      throw new GuestExit(code & 0xff);
    },
    'wasi:cli/stdin#get-stdin': () => T.add(new EmptyInput()),
    'wasi:cli/stdout#get-stdout': () => T.add(new LogOutput(cli.stdout)),
    'wasi:cli/stderr#get-stderr': () => T.add(new LogOutput(cli.stderr)),
    'wasi:cli/terminal-input#[resource-drop]terminal-input': () => {
      throw new HostTrap('no terminal-input handle was given');
    },
    'wasi:cli/terminal-output#[resource-drop]terminal-output': () => {
      throw new HostTrap('no terminal-output handle was given');
    },
    'wasi:cli/terminal-stdin#get-terminal-stdin': none,
    'wasi:cli/terminal-stdout#get-terminal-stdout': none,
    'wasi:cli/terminal-stderr#get-terminal-stderr': none,
  };
}

/** Stores a `list<u8>` (pointer, length) at `ret`. @param {Guest} g @param {number} ret @param {Uint8Array} b */
function putBytesAt(g, ret, b) {
  const [p, l] = g.putBytes(b);
  g.putPtrLen(ret, p, l);
}

export { readyPollable };

// wasi:io's resources as nodelet's own host implements them for components served per request:
// pollables, input and output streams, and the error resource. Each stream reports whether it
// could go on now (`ready()`) and gives a promise for when it can (`wait()`): the blocking
// functions of wasi:io are JSPI `Suspending` imports (host-imports.mjs) that await that promise,
// so a waiting request suspends its own instance while every other request runs on.
// Plain JavaScript, typed with JSDoc.
/** @import { Readable, Writable } from 'node:stream' */

/** wasi:io/error's `error`: what went wrong with the last operation on a stream. */
export class IoError {
  /** @param {string} message */
  constructor(message) {
    this.message = message;
  }
}

/** A stream refused the operation: `closed`, or `last-operation-failed` with `error`. */
export class StreamError {
  /** @param {IoError | undefined} error undefined: the stream is closed */
  constructor(error) {
    this.error = error;
  }
}
const CLOSED = new StreamError(undefined);

/** wasi:io/poll's `pollable`: a condition and how to wait for it. */
export class Pollable {
  /** @param {() => boolean} ready @param {() => Promise<unknown>} wait */
  constructor(ready, wait) {
    this.ready = ready;
    this.wait = wait;
  }
}
const settled = Promise.resolve();
/** A pollable that is always ready. */
export const readyPollable = () =>
  new Pollable(
    () => true,
    () => settled,
  );

/** A pollable ready at `deadlineNs` of the monotonic clock (process.hrtime.bigint()). @param {bigint} deadlineNs */
export function timerPollable(deadlineNs) {
  /** @type {Promise<void> | undefined} */
  let timer;
  return new Pollable(
    () => process.hrtime.bigint() >= deadlineNs,
    () =>
      (timer ??= new Promise((resolve) => {
        const ms = Number(deadlineNs - process.hrtime.bigint()) / 1e6;
        setTimeout(resolve, Math.max(0, Math.ceil(ms)));
      })),
  );
}

/** Resolves the waiters of a condition when it changes. */
class Signal {
  /** @type {Array<() => void>} */
  #waiters = [];
  /** @returns {Promise<void>} */
  wait() {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
  fire() {
    const w = this.#waiters;
    this.#waiters = [];
    for (const resolve of w) resolve();
  }
}

/** wasi:io/streams' `input-stream`. */
export class InputStream {
  /**
   * Up to `max` bytes available now: an empty array when none are yet.
   * @param {number} _max
   * @returns {Uint8Array}
   * @throws {StreamError} closed (at its end) or failed
   */
  read(_max) {
    throw CLOSED;
  }
  /** Bytes (or the end, or a failure) can be read now. */
  ready() {
    return true;
  }
  /** @returns {Promise<unknown>} */
  wait() {
    return settled;
  }
  /** The stream is no longer used (its handle was dropped). */
  close() {}
}

/** An input stream of a Node.js Readable (a request's or a response's body), read as the guest asks. */
export class ReadableInput extends InputStream {
  /** @type {Buffer[]} */
  #chunks = [];
  #size = 0;
  #ended = false;
  /** @type {IoError | undefined} */
  #error;
  #signal = new Signal();
  /** @type {Readable} */
  #source;
  /** Called once the whole body was read (for future-trailers). */
  onEnd = () => {};

  /** @param {Readable} source */
  constructor(source) {
    super();
    this.#source = source;
    source.on('data', (/** @type {Buffer} */ c) => {
      this.#chunks.push(c);
      this.#size += c.length;
      if (this.#size >= 1 << 20) source.pause();
      this.#signal.fire();
    });
    source.on('end', () => {
      this.#ended = true;
      this.onEnd();
      this.#signal.fire();
    });
    const fail = (/** @type {string} */ why) => {
      if (this.#ended) return;
      this.#error ??= new IoError(why);
      this.#signal.fire();
    };
    source.on('error', (e) => fail(e.message));
    source.on('close', () => fail('the connection closed before the body ended'));
  }

  /** @param {number} max @override */
  read(max) {
    if (this.#chunks.length === 0) {
      if (this.#error) throw new StreamError(this.#error);
      if (this.#ended) throw CLOSED;
      return new Uint8Array(0);
    }
    /** @type {Buffer[]} */
    const out = [];
    let n = 0;
    while (n < max && this.#chunks.length > 0) {
      const c = /** @type {Buffer} */ (this.#chunks[0]);
      if (n + c.length <= max) {
        out.push(c);
        n += c.length;
        this.#chunks.shift();
      } else {
        out.push(c.subarray(0, max - n));
        this.#chunks[0] = c.subarray(max - n);
        n = max;
      }
    }
    this.#size -= n;
    if (this.#size < 1 << 19 && this.#source.isPaused()) this.#source.resume();
    return out.length === 1 ? /** @type {Buffer} */ (out[0]) : Buffer.concat(out, n);
  }
  /** @override */
  ready() {
    return this.#chunks.length > 0 || this.#ended || this.#error !== undefined;
  }
  /** @override */
  wait() {
    return this.ready() ? settled : this.#signal.wait();
  }
  /** Ends the wait of every reader (the request is over). @param {string} why */
  abort(why) {
    this.#error ??= new IoError(why);
    this.#signal.fire();
  }
}

/** wasi:io/streams' `output-stream`. */
export class OutputStream {
  /**
   * Bytes that may be written now.
   * @returns {number}
   * @throws {StreamError}
   */
  checkWrite() {
    return 1 << 16;
  }
  /** @param {Uint8Array} _bytes @throws {StreamError} */
  write(_bytes) {}
  /** Everything written has gone on and more may be written. */
  ready() {
    return true;
  }
  /** @returns {Promise<unknown>} */
  wait() {
    return settled;
  }
  /** The stream is no longer used (its handle was dropped). */
  close() {}
}

/** Standard output or error of a component: lines go to the container's log. */
export class LogOutput extends OutputStream {
  /** @param {(bytes: Uint8Array) => void} sink */
  constructor(sink) {
    super();
    this.sink = sink;
  }
  /** @param {Uint8Array} bytes @override */
  write(bytes) {
    this.sink(bytes);
  }
}

/**
 * The body of an outgoing message (a response, or an outgoing request): written to a Node.js
 * Writable once the message is sent (`attach`), held until then (up to {@link BodyOutput.HOLD}
 * bytes; more waits for the attach). `end()` when the guest finishes the body.
 */
export class BodyOutput extends OutputStream {
  static HOLD = 1 << 20;
  /** @type {Writable | undefined} */
  #sink;
  /** @type {Buffer[]} */
  #held = [];
  #heldBytes = 0;
  #ended = false;
  /** @type {IoError | undefined} */
  #error;
  #signal = new Signal();
  /** Bytes written through this stream. */
  written = 0;

  /** @param {Writable} sink */
  attach(sink) {
    this.#sink = sink;
    sink.on('drain', () => this.#signal.fire());
    sink.on('close', () => {
      if (!sink.writableFinished) this.fail('the connection closed');
    });
    sink.on('error', (e) => this.fail(e.message));
    for (const c of this.#held) sink.write(c);
    this.#held = [];
    this.#heldBytes = 0;
    if (this.#ended) sink.end();
    this.#signal.fire();
  }
  /** @param {string} why */
  fail(why) {
    this.#error ??= new IoError(why);
    this.#signal.fire();
  }
  /** @override */
  checkWrite() {
    if (this.#error) throw new StreamError(this.#error);
    if (this.#ended) throw CLOSED;
    if (!this.#sink) return Math.max(0, BodyOutput.HOLD - this.#heldBytes);
    return this.#sink.writableNeedDrain ? 0 : 1 << 16;
  }
  /** @param {Uint8Array} bytes @override */
  write(bytes) {
    if (this.#error) throw new StreamError(this.#error);
    if (this.#ended) throw CLOSED;
    const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.written += b.length;
    if (this.#sink) this.#sink.write(b);
    else {
      this.#held.push(b);
      this.#heldBytes += b.length;
    }
  }
  /** @override */
  ready() {
    return this.#error !== undefined || (this.#sink ? !this.#sink.writableNeedDrain : this.#heldBytes < BodyOutput.HOLD);
  }
  /** @override */
  wait() {
    return this.ready() ? settled : this.#signal.wait();
  }
  /**
   * Everything written, in one buffer, when the guest finished the body before it was attached
   * (the message is then sent whole, not streamed); undefined otherwise.
   * @returns {Buffer | undefined}
   */
  whole() {
    if (!this.#ended || this.#sink) return undefined;
    const b = this.#held.length === 1 ? /** @type {Buffer} */ (this.#held[0]) : Buffer.concat(this.#held, this.#heldBytes);
    this.#held = [];
    this.#heldBytes = 0;
    return b;
  }
  /** The guest finished the body: the message ends once everything held is written. */
  end() {
    this.#ended = true;
    if (this.#sink) this.#sink.end();
  }
  get ended() {
    return this.#ended;
  }
}

/** An input stream with nothing in it (a component's stdin). */
export class EmptyInput extends InputStream {}

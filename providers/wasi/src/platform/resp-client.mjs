// A small Redis client: RESP2 over one TCP connection, commands pipelined in order, replies
// matched to them first in, first out. Used by the Redis key-value store (redis-store.mjs) inside
// the worker threads that run components.
//
// Why not an npm client: the worker threads load plain JavaScript without a bundler and keep the
// memory of each container's thread small; the store needs a handful of commands (GET, SET, DEL,
// EXISTS, SCAN, INCRBY, MGET, MSET, EVAL) and nothing of a full client's pub/sub, cluster or
// script caching. Redis' protocol for these is a few dozen lines.
//
// The connection is made on first use and again after it broke (every command then waiting
// fails with the reason); `AUTH` and `SELECT` are sent first when the URL names a password or a
// database. Plain JavaScript, typed with JSDoc.
import { connect } from 'node:net';

/**
 * A reply: simple strings and bulk strings as Buffers, integers as bigints, nil as null, arrays.
 * @typedef {Buffer | bigint | null | RespArray} RespReply
 * @typedef {Array<RespReply>} RespArray
 */

/** An error reply of the server (`-ERR …`). */
export class RespError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'RespError';
  }
}

/**
 * Where a Redis URL points: `redis://[[user]:password@]host[:port][/db]`.
 * @param {string} url
 * @returns {{ host: string, port: number, db: number, user?: string, password?: string }}
 */
export function parseRedisUrl(url) {
  const u = new URL(url);
  if (u.protocol !== 'redis:') throw new Error(`${url}: only redis:// URLs are supported`);
  const db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0;
  if (!Number.isInteger(db) || db < 0) throw new Error(`${url}: the path must be a database number`);
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!host) throw new Error(`${url}: no host`);
  return {
    host,
    port: u.port ? Number(u.port) : 6379,
    db,
    ...(u.username ? { user: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
  };
}

/** Encodes one command as a RESP array of bulk strings. @param {ReadonlyArray<string | Uint8Array | bigint | number>} args */
export function encodeCommand(args) {
  /** @type {Buffer[]} */
  const parts = [Buffer.from(`*${args.length}\r\n`)];
  for (const a of args) {
    const b =
      typeof a === 'string' || typeof a === 'number' || typeof a === 'bigint' ? Buffer.from(String(a)) : Buffer.from(a.buffer, a.byteOffset, a.byteLength);
    parts.push(Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

/**
 * Parses one reply at `at` of `buf`: the reply and where the next one begins, or undefined when
 * `buf` does not hold all of it yet.
 * @param {Buffer} buf @param {number} at
 * @returns {{ value: RespReply | RespError, next: number } | undefined}
 */
export function parseReply(buf, at) {
  const eol = buf.indexOf('\r\n', at);
  if (eol < 0) return undefined;
  const line = buf.toString('latin1', at + 1, eol);
  switch (buf[at]) {
    case 0x2b: // +
      return { value: buf.subarray(at + 1, eol), next: eol + 2 };
    case 0x2d: // -
      return { value: new RespError(buf.toString('utf8', at + 1, eol)), next: eol + 2 };
    case 0x3a: // :
      return { value: BigInt(line), next: eol + 2 };
    case 0x24: {
      // $
      const len = Number(line);
      if (len < 0) return { value: null, next: eol + 2 };
      if (buf.length < eol + 2 + len + 2) return undefined;
      return { value: Buffer.from(buf.subarray(eol + 2, eol + 2 + len)), next: eol + 2 + len + 2 };
    }
    case 0x2a: {
      // *
      const n = Number(line);
      if (n < 0) return { value: null, next: eol + 2 };
      /** @type {RespReply[]} */
      const items = [];
      let next = eol + 2;
      for (let i = 0; i < n; i++) {
        const r = parseReply(buf, next);
        if (!r) return undefined;
        if (r.value instanceof RespError) return { value: r.value, next: skipRest(buf, r.next, n - i - 1) ?? buf.length };
        items.push(r.value);
        next = r.next;
      }
      return { value: items, next };
    }
    default:
      throw new Error(`unexpected reply byte 0x${(buf[at] ?? 0).toString(16)} from the Redis server`);
  }
}

/** @param {Buffer} buf @param {number} at @param {number} n @returns {number | undefined} */
function skipRest(buf, at, n) {
  let next = at;
  for (let i = 0; i < n; i++) {
    const r = parseReply(buf, next);
    if (!r) return undefined;
    next = r.next;
  }
  return next;
}

/** One connection to a Redis server, made on first use. */
export class RespClient {
  /** @type {import('node:net').Socket | undefined} */
  #sock;
  /** @type {Array<{ resolve: (r: RespReply) => void, reject: (e: Error) => void }>} */
  #waiting = [];
  /** @type {Buffer} */
  #buf = Buffer.alloc(0);

  /**
   * @param {string} url `redis://…`
   * @param {{ connectTimeoutMs?: number }} [opts]
   */
  constructor(url, opts = {}) {
    this.url = url;
    this.target = parseRedisUrl(url);
    this.connectTimeoutMs = opts.connectTimeoutMs ?? 5000;
  }

  /**
   * Sends a command; resolves with its reply, rejects with a RespError for an error reply or an
   * Error when the connection fails.
   * @param {ReadonlyArray<string | Uint8Array | bigint | number>} args
   * @returns {Promise<RespReply>}
   */
  command(args) {
    const sock = this.#sock ?? this.#connect();
    return this.#send(sock, args);
  }

  /** Closes the connection (commands still waiting fail). */
  close() {
    this.#sock?.destroy();
    this.#fail(new Error('the Redis connection was closed'));
    this.#sock = undefined;
  }

  /** @param {import('node:net').Socket} sock @param {ReadonlyArray<string | Uint8Array | bigint | number>} args @returns {Promise<RespReply>} */
  #send(sock, args) {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ resolve, reject });
      sock.write(encodeCommand(args));
    });
  }

  #connect() {
    const { host, port, db, user, password } = this.target;
    const sock = connect({ host, port });
    sock.setNoDelay(true);
    this.#sock = sock;
    this.#buf = Buffer.alloc(0);
    const timer = setTimeout(() => sock.destroy(new Error(`no connection to ${host}:${port} within ${this.connectTimeoutMs} ms`)), this.connectTimeoutMs);
    timer.unref();
    sock.once('connect', () => clearTimeout(timer));
    sock.on('data', (chunk) => this.#onData(chunk));
    sock.on('error', (e) => this.#broken(sock, new Error(`Redis at ${host}:${port}: ${e.message}`)));
    sock.on('close', () => this.#broken(sock, new Error(`the connection to Redis at ${host}:${port} closed`)));
    // The connection must not keep the thread alive on its own.
    sock.unref();
    // First in the pipeline: a failure of either fails the commands after it too, with its reason.
    if (password !== undefined) void this.#send(sock, user ? ['AUTH', user, password] : ['AUTH', password]).catch((e) => sock.destroy(e));
    if (db !== 0) void this.#send(sock, ['SELECT', db]).catch((e) => sock.destroy(e));
    return sock;
  }

  /** @param {Buffer} chunk */
  #onData(chunk) {
    this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
    let at = 0;
    for (;;) {
      let r;
      try {
        r = parseReply(this.#buf, at);
      } catch (e) {
        this.#sock?.destroy(/** @type {Error} */ (e));
        return;
      }
      if (!r) break;
      at = r.next;
      const w = this.#waiting.shift();
      if (!w) continue;
      if (r.value instanceof RespError) w.reject(r.value);
      else w.resolve(r.value);
    }
    this.#buf = at === this.#buf.length ? Buffer.alloc(0) : this.#buf.subarray(at);
  }

  /** @param {import('node:net').Socket} sock @param {Error} e */
  #broken(sock, e) {
    if (this.#sock !== sock) return;
    this.#sock = undefined;
    this.#fail(e);
  }

  /** @param {Error} e */
  #fail(e) {
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const w of waiting) w.reject(e);
  }
}

// A key-value store on a Redis server, for an app whose pods run on several nodes and share their
// data: keys are Redis keys as they are (as Spin's Redis store keeps them), in the database the URL
// names. Every operation is one command (compare-and-swap one EVAL, so it is atomic on the
// server) and returns a promise; the host suspends the component while it waits.
// Plain JavaScript, typed with JSDoc (it runs in the worker threads).
import { RespClient } from './resp-client.mjs';
/** @import { RespReply } from './resp-client.mjs' */

/** How many keys one SCAN is asked for. */
const SCAN_COUNT = 1000;
/** Sets ARGV[2] when the key holds ARGV[1] (or, with ARGV[3] = '1', when it is absent). */
const SWAP_SCRIPT =
  "local v = redis.call('GET', KEYS[1]) if (ARGV[3] == '1' and v == false) or (ARGV[3] == '0' and v == ARGV[1]) then redis.call('SET', KEYS[1], ARGV[2]) return 1 end return 0";

/** @param {RespReply} r @returns {Uint8Array | undefined} */
const bytesOf = (r) => (r === null ? undefined : r instanceof Buffer ? new Uint8Array(r) : undefined);

/** A store on a Redis server (a KeyValueBackend: keyvalue-store.mjs). */
export class RedisStore {
  /** @param {string} url `redis://[[user]:password@]host[:port][/db]` */
  constructor(url) {
    this.client = new RespClient(url);
  }

  /** @param {string} key */
  async get(key) {
    return bytesOf(await this.client.command(['GET', key]));
  }

  /** @param {string} key @param {Uint8Array} value */
  async set(key, value) {
    await this.client.command(['SET', key, value]);
  }

  /** @param {string} key */
  async delete(key) {
    await this.client.command(['DEL', key]);
  }

  /** @param {string} key */
  async exists(key) {
    return (await this.client.command(['EXISTS', key])) === 1n;
  }

  /** @param {string | undefined} cursor SCAN's cursor */
  async listKeys(cursor) {
    const r = await this.client.command(['SCAN', cursor ?? '0', 'COUNT', SCAN_COUNT]);
    const [next, keys] = /** @type {[Buffer, Buffer[]]} */ (r);
    const n = next.toString();
    return { keys: keys.map((k) => k.toString()), cursor: n === '0' ? undefined : n };
  }

  /** @param {string} key @param {bigint} delta */
  async increment(key, delta) {
    return /** @type {bigint} */ (await this.client.command(['INCRBY', key, delta]));
  }

  /** @param {readonly string[]} keys */
  async getMany(keys) {
    if (keys.length === 0) return [];
    const r = /** @type {RespReply[]} */ (await this.client.command(['MGET', ...keys]));
    return r.map(bytesOf);
  }

  /** @param {ReadonlyArray<readonly [string, Uint8Array]>} pairs */
  async setMany(pairs) {
    if (pairs.length > 0) await this.client.command(['MSET', ...pairs.flat()]);
  }

  /** @param {readonly string[]} keys */
  async deleteMany(keys) {
    if (keys.length > 0) await this.client.command(['DEL', ...keys]);
  }

  /** @param {string} key @param {Uint8Array | undefined} expected @param {Uint8Array} value */
  async swap(key, expected, value) {
    const r = await this.client.command(['EVAL', SWAP_SCRIPT, 1, key, expected ?? '', value, expected === undefined ? '1' : '0']);
    return r === 1n;
  }

  close() {
    this.client.close();
  }
}

// A Redis store whose operations block the calling thread until the answer is there, for the
// component path whose host calls cannot wait (jco's synchronous bindings,
// ../worker/platform/jco-platform.mjs). The Redis client runs in a helper thread of its own
// (blocking-store-worker.mjs); each operation is posted to it, the caller sleeps in `Atomics.wait`
// on a shared word the helper sets once it has posted the answer, and takes the answer with
// `receiveMessageOnPort` (its own event loop being stopped meanwhile). One helper per store, started
// on first use, ended with the store. An answer that does not come within the timeout fails the
// operation (`other`); the component's thread is held that long at most.
// Plain JavaScript, typed with JSDoc (it runs in the worker threads).
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { KeyValueError } from './keyvalue-error.mjs';
/** @import { MessagePort } from 'node:worker_threads' */

const HELPER_URL = new URL('./blocking-store-worker.mjs', import.meta.url);
/** How long one operation may take before it fails. */
export const BLOCKING_TIMEOUT_MS = 10_000;

/**
 * What the helper answers: the operation's value, or its failure.
 * @typedef {{ value: unknown } | { error: string, kind: 'no-such-store' | 'access-denied' | 'other' }} HelperAnswer
 */

/** A store on Redis with synchronous operations (a KeyValueBackend: keyvalue-store.mjs). */
export class BlockingRedisStore {
  /** @type {{ worker: Worker, port: MessagePort, done: Int32Array } | undefined} */
  #helper;

  /** @param {string} url `redis://…` @param {number} [timeoutMs] */
  constructor(url, timeoutMs = BLOCKING_TIMEOUT_MS) {
    this.url = url;
    this.timeoutMs = timeoutMs;
  }

  /** @param {string} key @returns {Uint8Array | undefined} */
  get(key) {
    return /** @type {Uint8Array | undefined} */ (this.#call('get', [key]));
  }

  /** @param {string} key @param {Uint8Array} value */
  set(key, value) {
    this.#call('set', [key, value]);
  }

  /** @param {string} key */
  delete(key) {
    this.#call('delete', [key]);
  }

  /** @param {string} key @returns {boolean} */
  exists(key) {
    return /** @type {boolean} */ (this.#call('exists', [key]));
  }

  /** @param {string | undefined} cursor @returns {{ keys: string[], cursor: string | undefined }} */
  listKeys(cursor) {
    return /** @type {{ keys: string[], cursor: string | undefined }} */ (this.#call('listKeys', [cursor]));
  }

  /** @param {string} key @param {bigint} delta @returns {bigint} */
  increment(key, delta) {
    return /** @type {bigint} */ (this.#call('increment', [key, delta]));
  }

  /** @param {readonly string[]} keys @returns {Array<Uint8Array | undefined>} */
  getMany(keys) {
    return /** @type {Array<Uint8Array | undefined>} */ (this.#call('getMany', [keys]));
  }

  /** @param {ReadonlyArray<readonly [string, Uint8Array]>} pairs */
  setMany(pairs) {
    this.#call('setMany', [pairs]);
  }

  /** @param {readonly string[]} keys */
  deleteMany(keys) {
    this.#call('deleteMany', [keys]);
  }

  /** @param {string} key @param {Uint8Array | undefined} expected @param {Uint8Array} value @returns {boolean} */
  swap(key, expected, value) {
    return /** @type {boolean} */ (this.#call('swap', [key, expected, value]));
  }

  close() {
    const h = this.#helper;
    this.#helper = undefined;
    if (h) {
      h.port.close();
      void h.worker.terminate();
    }
  }

  /** @param {string} op @param {unknown[]} args @returns {unknown} */
  #call(op, args) {
    const h = (this.#helper ??= this.#start());
    Atomics.store(h.done, 0, 0);
    h.port.postMessage({ op, args });
    if (Atomics.wait(h.done, 0, 0, this.timeoutMs) === 'timed-out') {
      // Its answer, if it comes, must not be taken for the next operation's.
      this.close();
      throw new KeyValueError('other', `Redis at ${this.url.replace(/\/\/[^@/]*@/, '//')} did not answer within ${this.timeoutMs / 1000}s`);
    }
    const answer = /** @type {HelperAnswer | undefined} */ (receiveMessageOnPort(h.port)?.message);
    if (!answer) throw new KeyValueError('other', 'the Redis helper thread gave no answer');
    if ('error' in answer) throw new KeyValueError(answer.kind, answer.error);
    return answer.value;
  }

  #start() {
    const { port1, port2 } = new MessageChannel();
    const done = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(HELPER_URL, {
      workerData: { url: this.url, port: port2, done },
      transferList: [port2],
      execArgv: [],
      argv: [],
      env: {},
      stdin: false,
      stdout: true,
      stderr: true,
    });
    worker.stdout.resume();
    worker.stderr.resume();
    // The helper must not keep the component's thread alive on its own.
    worker.unref();
    port1.unref();
    return { worker, port: port1, done };
  }
}

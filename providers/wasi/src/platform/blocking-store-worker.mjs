// The helper thread of a BlockingRedisStore (blocking-store.mjs): runs the Redis store's operations
// as they are posted on its port, posts each answer, then sets the shared word and wakes the caller
// sleeping on it. Plain JavaScript, typed with JSDoc.
import { workerData } from 'node:worker_threads';
import { RedisStore } from './redis-store.mjs';
import { asKeyValueError } from './keyvalue-error.mjs';
/** @import { MessagePort } from 'node:worker_threads' */

const { url, port, done } = /** @type {{ url: string, port: MessagePort, done: Int32Array }} */ (workerData);
const store = new RedisStore(url);
/** @type {Record<string, (...args: any[]) => Promise<unknown>>} */
const ops = {
  get: (k) => store.get(k),
  set: (k, v) => store.set(k, v),
  delete: (k) => store.delete(k),
  exists: (k) => store.exists(k),
  listKeys: (c) => store.listKeys(c),
  increment: (k, d) => store.increment(k, d),
  getMany: (ks) => store.getMany(ks),
  setMany: (ps) => store.setMany(ps),
  deleteMany: (ks) => store.deleteMany(ks),
  swap: (k, e, v) => store.swap(k, e, v),
};

port.on('message', async (/** @type {{ op: string, args: unknown[] }} */ { op, args }) => {
  try {
    const f = ops[op];
    if (!f) throw new Error(`unknown operation ${op}`);
    port.postMessage({ value: await f(...args) });
  } catch (e) {
    const k = asKeyValueError(e);
    port.postMessage({ error: k.message, kind: k.kind });
  }
  Atomics.store(done, 0, 1);
  Atomics.notify(done, 0);
});

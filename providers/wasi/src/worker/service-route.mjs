// Where a workload's outgoing connection goes, asked from inside its worker: the provider
// answers with the node's Service resolver (ProviderContext.services, core/services) over a
// MessagePort given to the container (../services-channel.ts is the other end). nodelet runs no
// kube-proxy, so a ClusterIP or a Service name means something only through this question.
//
//   route(host, port)      async: one message out, one back (wasi:http host, wasi_experimental_http)
//   routeSync(host, port)  blocking: the answer is written into a SharedArrayBuffer the worker
//                          waits on with Atomics.wait (preview2-shim's outgoing handler, called
//                          synchronously from the component)
//
// No answer within ROUTE_TIMEOUT_MS (the provider's side is gone, e.g. the external runtime lost
// nodelet): `error`, so the request fails with a reason instead of hanging. Plain JavaScript,
// typed with JSDoc (see ../worker-protocol.ts).
/** @import { MessagePort } from 'node:worker_threads' */
/** @import { RouteAsk, RouteReply, WorkerRoute } from '../worker-protocol.ts' */
/** @import { ServiceProtocol } from '@nodelet/plugin-api/v1' */

/** How long a question waits for its answer. */
export const ROUTE_TIMEOUT_MS = 5000;
/** Bytes of a blocking question's answer buffer: two Int32 (state, length), then the answer as JSON. */
export const SYNC_REPLY_BYTES = 4096;

/**
 * Asks the provider where connections go.
 */
export class RouteClient {
  #port;
  #next = 1;
  /** @type {Map<number, (r: WorkerRoute) => void>} */
  #pending = new Map();

  /** @param {MessagePort} port */
  constructor(port) {
    this.#port = port;
    port.on('message', (/** @type {RouteReply} */ m) => {
      const done = this.#pending.get(m.id);
      this.#pending.delete(m.id);
      done?.(m.route);
    });
    // The port keeps the thread alive only while a question waits for its answer (a module
    // suspended in a request has nothing else to wait on).
    port.unref();
  }

  /** @param {number} id @param {(r: WorkerRoute) => void} done */
  #wait(id, done) {
    if (this.#pending.size === 0) this.#port.ref();
    this.#pending.set(id, (r) => {
      if (this.#pending.size === 0) this.#port.unref();
      done(r);
    });
  }

  /** @param {number} id */
  #forget(id) {
    if (this.#pending.delete(id) && this.#pending.size === 0) this.#port.unref();
  }

  /**
   * Where a TCP connection to `host:port` goes (an IPv6 `host` with or without brackets).
   * @param {string} host @param {number} port
   * @returns {Promise<WorkerRoute>}
   */
  route(host, port) {
    const id = this.#next++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#forget(id);
        resolve(noAnswer());
      }, ROUTE_TIMEOUT_MS);
      this.#wait(id, (r) => {
        clearTimeout(timer);
        resolve(r);
      });
      this.#port.postMessage(/** @type {RouteAsk} */ ({ id, host, port }));
    });
  }

  /**
   * {@link RouteClient.route}, blocking the thread until the answer (or the timeout). `protocol`:
   * the Service port's (TCP unless given).
   * @param {string} host @param {number} port @param {ServiceProtocol} [protocol]
   * @returns {WorkerRoute}
   */
  routeSync(host, port, protocol) {
    const reply = new SharedArrayBuffer(SYNC_REPLY_BYTES);
    const state = new Int32Array(reply, 0, 2);
    this.#port.postMessage(/** @type {RouteAsk} */ ({ id: this.#next++, host, port, reply, ...(protocol ? { protocol } : {}) }));
    if (Atomics.wait(state, 0, 0, ROUTE_TIMEOUT_MS) === 'timed-out') return noAnswer();
    const len = /** @type {number} */ (state[1]);
    return JSON.parse(new TextDecoder().decode(new Uint8Array(reply, 8, len)));
  }
}

/** @returns {WorkerRoute} */
const noAnswer = () => ({ kind: 'error', message: `the Service resolver did not answer within ${ROUTE_TIMEOUT_MS} ms` });

/**
 * Writes `route` into a blocking question's buffer and wakes the asker (the provider's side).
 * @param {SharedArrayBuffer} reply @param {WorkerRoute} route
 */
export function answerSync(reply, route) {
  let bytes = new TextEncoder().encode(JSON.stringify(route));
  if (bytes.length > reply.byteLength - 8)
    bytes = new TextEncoder().encode(JSON.stringify({ kind: 'error', message: 'the route does not fit its answer buffer' }));
  new Uint8Array(reply, 8, bytes.length).set(bytes);
  const state = new Int32Array(reply, 0, 2);
  Atomics.store(state, 1, bytes.length);
  Atomics.store(state, 0, 1);
  Atomics.notify(state, 0);
}

/**
 * `host` and port of an authority (`name`, `name:port`, `1.2.3.4:port`, `[v6]:port`), with
 * `defaultPort` when it has none; undefined when it does not parse.
 * @param {string} authority @param {number} defaultPort
 * @returns {{ host: string, port: number } | undefined}
 */
export function splitAuthority(authority, defaultPort) {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/.exec(authority);
  if (!m) return undefined;
  const port = m[3] === undefined ? defaultPort : Number(m[3]);
  if (port < 1 || port > 65535) return undefined;
  return { host: /** @type {string} */ (m[1] ?? m[2]), port };
}

// Serves a wasi:http component over HTTP/1.1 with an instance per request (instance-pool.mjs):
// each request takes an instance, calls its `incoming-handler.handle` through JSPI (a request
// that waits suspends only its own instance: many are in flight at once), and gives it back to be
// reset. What a request does to its instance ends with it:
//  - a trap (or wasi:cli/exit) answers 500 (or cuts the connection when the response had begun),
//    writes the trap to the container's log, counts it, and drops only that instance;
//  - the request timeout (off unless set) ends a request that is still waiting, the same way;
//  - when every instance allowed is busy, requests wait in a bounded queue; past it, 503.
// The container keeps serving through all of these: none of them ends it.
// Plain JavaScript, typed with JSDoc.
import { IncomingRequest, ResponseOutparam } from './http-types.mjs';
import { GuestExit } from './imports-io.mjs';
import { describeTrap } from '../trap-report.mjs';
import { InstancePool } from './instance-pool.mjs';
import { RequestMetricsWriter, SLOT } from './request-metrics.mjs';
import { BodyOutput, InputStream, OutputStream } from './streams.mjs';
/** @import { IncomingMessage, Server, ServerResponse } from 'node:http' */

// Not an ES import: node:http's namespace loads Node's bundled undici (eslint.config.js says why).
const http = process.getBuiltinModule('node:http');
/** @import { PerRequestPlan, Slot } from './instance-pool.mjs' */
/** @import { CliContext } from './imports-io.mjs' */
/** @import { OutgoingResponse, ErrorCode } from './http-types.mjs' */

/** A request ended by the host (its timeout) while its instance waited. */
export class RequestAborted extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'RequestAborted';
  }
}

/**
 * @typedef {object} ServeOptions
 * @property {PerRequestPlan} plan
 * @property {{ host: string, port: number }} listen
 * @property {CliContext} cli
 * @property {SharedArrayBuffer} metrics see request-metrics.mjs
 * @property {{ warm: number, max: number }} bounds instances kept ready / at most at once
 * @property {number} [timeoutMs] per-request timeout (none when unset)
 * @property {number} [oomAboveBytes] with a memory limit: a trap with the instance's memory above this is an out-of-memory
 * @property {(line: string) => void} logLine writes a line of the host's to the container's log (stderr)
 */

/**
 * Makes the first instance, then listens. Resolves with the server once listening; rejects with
 * the instantiation or listen error.
 * @param {ServeOptions} o
 * @returns {Promise<Server>}
 */
export async function serve(o) {
  const pool = new InstancePool(o.plan, o.cli, o.bounds);
  pool.start();
  const metrics = new RequestMetricsWriter(o.metrics);
  const m = metrics.m;
  const gauges = () => {
    m[SLOT.instances] = pool.size;
    m[SLOT.idleInstances] = pool.idle;
  };
  gauges();
  /** @type {Array<(s: Slot | undefined) => void>} */
  const waiting = [];
  const queueMax = o.bounds.max * 4;
  let filling = false;
  const refill = () => {
    if (filling) return;
    filling = true;
    setImmediate(() => {
      filling = false;
      pool.fill();
      gauges();
    });
  };

  /** @returns {Promise<Slot | undefined> | Slot | undefined} */
  const acquire = () => {
    const s = pool.acquire();
    if (s || waiting.length >= queueMax) return s;
    return new Promise((resolve) => waiting.push(resolve));
  };
  /** @param {Slot} s @param {boolean} clean */
  const release = (s, clean) => {
    for (const left of pool.release(s, clean)) if (left instanceof InputStream || left instanceof OutputStream) left.close();
    const next = waiting.shift();
    if (next) next(pool.acquire());
    else if (pool.idle < o.bounds.warm) refill();
    gauges();
  };

  /**
   * One request on one instance. Resolves with the status answered (the one begun when the
   * connection was cut in the middle of a response).
   *
   * The response is sent when the handler returns — whole, with its length, in one write — or,
   * when the handler waits first (a suspending import) after setting it, streamed from then on.
   * @param {Slot} slot @param {IncomingMessage} req @param {ServerResponse} res
   * @returns {Promise<number>}
   */
  async function run(slot, req, res) {
    const g = slot.guest;
    /** @type {{ response: OutgoingResponse } | { error: ErrorCode } | undefined} */
    let set;
    let streaming = false;
    const stream = () => {
      if (streaming || !set || !('response' in set)) return;
      streaming = true;
      res.writeHead(set.response.status, set.response.headers.toNode());
      set.response.body.output.attach(res);
    };
    g.onSuspend = stream;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    if (o.timeoutMs) {
      const ms = o.timeoutMs;
      g.aborted = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new RequestAborted(`the request timeout of ${ms} ms passed`)), ms);
      });
      g.aborted.catch(() => {});
    }
    /** @type {unknown} */
    let failure;
    try {
      const out = g.table.add(
        new ResponseOutparam((r) => {
          set ??= r;
        }),
      );
      await slot.handle(g.table.add(new IncomingRequest(req, o.listen)), out);
    } catch (e) {
      failure = e;
    } finally {
      if (timer) clearTimeout(timer);
      g.onSuspend = noop;
      g.aborted = NEVER;
    }
    release(slot, failure === undefined);
    const what = `${req.method} ${req.url}`;
    if (failure !== undefined) {
      const timedOut = failure instanceof RequestAborted;
      m[timedOut ? SLOT.timeouts : SLOT.traps]++;
      const why = failure instanceof Error ? `${failure.name}: ${failure.message}` : String(failure);
      const oom = !timedOut && o.oomAboveBytes !== undefined && slot.memory.buffer.byteLength > o.oomAboveBytes;
      const trap = oom
        ? `ran out of memory: the container's memory limit was reached (${describeTrap(failure)})`
        : `the component trapped: ${describeTrap(failure)}`;
      o.logLine(`${what}: ${timedOut || failure instanceof GuestExit ? why : trap}`);
      return fail(res, streaming, set);
    }
    if (!set) {
      o.logLine(`${what}: the component returned without setting a response`);
      return fail(res, streaming, set);
    }
    if ('error' in set) {
      o.logLine(`${what}: the component answered with error-code case ${set.error.tag}${set.error.message ? ` (${set.error.message})` : ''}`);
      return fail(res, streaming, set);
    }
    const resp = set.response;
    const output = resp.body.output;
    if (!streaming) {
      const whole = resp.bodyTaken ? output.whole() : EMPTY;
      if (!whole) {
        // The body was dropped (or left open) without finish: the response is incomplete.
        res.destroy();
        return resp.status;
      }
      const headers = resp.headers.toNode();
      if (resp.status >= 200 && resp.status !== 204 && resp.status !== 304 && !('content-length' in headers)) headers['content-length'] = String(whole.length);
      res.writeHead(resp.status, headers).end(whole);
    } else if (!resp.bodyTaken) res.end();
    else if (!output.ended) res.destroy();
    return resp.status;
  }

  const server = http.createServer({ keepAlive: true, requestTimeout: 0 }, (req, res) => {
    const t0 = performance.now();
    m[SLOT.inFlight]++;
    const finish = (/** @type {number} */ status) => {
      m[SLOT.inFlight]--;
      metrics.request(status, (performance.now() - t0) / 1000);
    };
    const begin = (/** @type {Slot | undefined} */ slot) => {
      if (!slot) {
        m[SLOT.overloaded]++;
        res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '1' }).end('every instance of the component is busy\n');
        return finish(503);
      }
      run(slot, req, res).then(finish, (e) => {
        o.logLine(`${req.method} ${req.url}: ${e instanceof Error ? e.message : String(e)}`);
        finish(fail(res, res.headersSent, undefined));
      });
    };
    const s = acquire();
    if (s instanceof Promise) s.then(begin);
    else begin(s);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.listen.port, o.listen.host, () => {
      server.off('error', reject);
      resolve(undefined);
    });
  });
  return server;
}

const noop = () => {};
/** The abort of a request without a timeout: never. @type {Promise<never>} */
const NEVER = new Promise(() => {});
const EMPTY = Buffer.alloc(0);

/**
 * Ends a failed request: 500 when nothing was sent yet, the connection cut otherwise.
 * @param {ServerResponse} res
 * @param {boolean} streaming the response's head was sent
 * @param {{ response: OutgoingResponse } | { error: ErrorCode } | undefined} set
 * @returns {number} the status counted
 */
function fail(res, streaming, set) {
  if (!streaming && !res.headersSent) {
    try {
      res.writeHead(500, { 'content-type': 'text/plain' }).end('the component failed to handle the request\n');
      return 500;
    } catch {
      // a head was already written: cut the connection below
    }
  }
  res.destroy();
  if (set && 'response' in set) {
    set.response.body.output.fail('the request failed');
    return set.response.status;
  }
  return 500;
}

export { BodyOutput };

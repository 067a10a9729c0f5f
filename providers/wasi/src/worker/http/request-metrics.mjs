// The request metrics of one container served per request, in a SharedArrayBuffer of float64
// slots: the serving thread adds to them as requests end, the provider reads them when /metrics is
// scraped (no message per request). One writer; a reader may see a request half counted, never a
// torn number. Plain JavaScript, typed with JSDoc; imported by the worker and the provider.

/** Upper bounds (seconds) of the request duration histogram; a last bucket holds the rest (+Inf). */
export const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Slot indices. */
export const SLOT = /** @type {const} */ ({
  inFlight: 0,
  instances: 1,
  idleInstances: 2,
  traps: 3,
  timeouts: 4,
  overloaded: 5,
  durationSum: 6,
  durationCount: 7,
  buckets: 8,
});
const CODES = SLOT.buckets + DURATION_BUCKETS.length + 1;
const SLOTS = CODES + 500;

/** A buffer for one container's metrics. */
export function newRequestMetrics() {
  return new SharedArrayBuffer(SLOTS * 8);
}

/** The serving thread's side. */
export class RequestMetricsWriter {
  /** @param {SharedArrayBuffer} sab */
  constructor(sab) {
    this.m = new Float64Array(sab);
  }
  /** A request ended with `status` (100–599) after `seconds`. @param {number} status @param {number} seconds */
  request(status, seconds) {
    const m = this.m;
    if (status >= 100 && status < 600) m[CODES + status - 100]++;
    m[SLOT.durationSum] += seconds;
    m[SLOT.durationCount]++;
    let b = 0;
    while (b < DURATION_BUCKETS.length && seconds > /** @type {number} */ (DURATION_BUCKETS[b])) b++;
    m[SLOT.buckets + b]++;
  }
}

/**
 * @typedef {object} RequestMetricsSnapshot
 * @property {number} inFlight requests being served now
 * @property {number} instances component instances alive (idle and busy)
 * @property {number} idleInstances instances ready for a request
 * @property {number} traps requests that ended in a trap (or wasi:cli/exit)
 * @property {number} timeouts requests ended by the request timeout
 * @property {number} overloaded requests refused with 503 (every instance busy, queue full)
 * @property {number} durationSum seconds, all requests
 * @property {number} durationCount requests ended
 * @property {Array<[number, number]>} buckets [upper bound, cumulative count], the last +Inf
 * @property {Array<[number, number]>} codes [status code, requests], codes seen only
 */

/** Reads a container's metrics. @param {SharedArrayBuffer} sab @returns {RequestMetricsSnapshot} */
export function readRequestMetrics(sab) {
  const m = new Float64Array(sab);
  const at = (/** @type {number} */ i) => /** @type {number} */ (m[i]);
  let cumulative = 0;
  /** @type {Array<[number, number]>} */
  const buckets = [...DURATION_BUCKETS, Infinity].map((le, i) => [le, (cumulative += at(SLOT.buckets + i))]);
  /** @type {Array<[number, number]>} */
  const codes = [];
  for (let c = 100; c < 600; c++) if (at(CODES + c - 100) > 0) codes.push([c, at(CODES + c - 100)]);
  return {
    inFlight: at(SLOT.inFlight),
    instances: at(SLOT.instances),
    idleInstances: at(SLOT.idleInstances),
    traps: at(SLOT.traps),
    timeouts: at(SLOT.timeouts),
    overloaded: at(SLOT.overloaded),
    durationSum: at(SLOT.durationSum),
    durationCount: at(SLOT.durationCount),
    buckets,
    codes,
  };
}

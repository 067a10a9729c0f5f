// Worker thread entry: serves one wasi:http component (one container) with an instance per
// request (http/serve.mjs), until the container is stopped (the thread is terminated).
// Plain JavaScript, type-checked against ../worker-protocol.ts.
//
// workerData: HttpWorkerData. Messages to the parent (ComponentMessage):
//   { type: 'started' }                   the first instance was made and the port is listened on
//   { type: 'failed', message, reason? }  could not start: instantiation, or the port
//                                         ('PortInUse' when taken, 'Listen' otherwise)
// A request's trap is answered (500), written to the container's log and counted in the
// container's metrics; it does not end the container.
import { parentPort, workerData } from 'node:worker_threads';
import { serve } from './http/serve.mjs';
import { RouteClient } from './service-route.mjs';
import { Platform } from './platform/platform-imports.mjs';
/** @import { ComponentMessage, HttpWorkerData } from '../worker-protocol.ts' */

if (!parentPort) throw new Error('http-worker.mjs runs as a worker thread');
const port = parentPort;
const d = /** @type {HttpWorkerData} */ (workerData);
/** @param {ComponentMessage} msg */
const post = (msg) => port.postMessage(msg);

/** @type {{ CriLogWriter: typeof import('@nodelet/plugin-api/v1/toolkit').CriLogWriter }} */
const { CriLogWriter } = await import(d.criLogUrl);
const log = new CriLogWriter(d.logPath, d.logOptions);
/** @param {'stdout' | 'stderr'} stream */
const sink = (stream) => (/** @type {Uint8Array} */ b) => {
  try {
    log.write(stream, Buffer.from(b.buffer, b.byteOffset, b.byteLength));
  } catch {
    // the log is closed: the container is ending
  }
};
const stderr = sink('stderr');

try {
  await serve({
    plan: { module: d.module, handleExport: d.handleExport },
    listen: d.listen,
    cli: {
      env: Object.entries(d.env),
      args: [...d.argv],
      stdout: sink('stdout'),
      stderr,
      route: d.routes ? new RouteClient(d.routes) : undefined,
      outbound: d.outbound
        ? {
            policy: d.outbound,
            denied: (url) => stderr(Buffer.from(`nodelet: outbound ${url} denied: not in the pod's wasi.nodelet.dev/allowed-outbound-hosts\n`)),
          }
        : undefined,
      platform: new Platform(d.platform, d.env),
    },
    metrics: d.metrics,
    bounds: d.bounds,
    timeoutMs: d.requestTimeoutMs,
    oomAboveBytes: d.oomAboveBytes,
    logLine: (line) => stderr(Buffer.from(`nodelet: ${line}\n`)),
  });
} catch (e) {
  const err = /** @type {{ code?: string, message?: string, name?: string }} */ (e);
  const { host, port: p } = d.listen;
  if (err?.code === 'EADDRINUSE') post({ type: 'failed', reason: 'PortInUse', message: `port ${p} on ${host} is already in use` });
  else if (err?.code) post({ type: 'failed', reason: 'Listen', message: `cannot listen on ${host}:${p}: ${err.message}` });
  else post({ type: 'failed', message: `${err?.name ?? 'Error'}: ${err?.message ?? String(e)}` });
  process.exit(1);
}
post({ type: 'started' });

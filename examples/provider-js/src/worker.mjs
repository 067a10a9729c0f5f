// Runs inside the container's worker thread (plain JS: no TypeScript loader here).
// Sets up argv and the `nodelet` global, relays a polite stop as SIGTERM, then
// imports the container's module. Output goes to process.stdout/stderr, which
// the provider copies into the CRI log.
import { posix } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';

/** @typedef {{ containerPath: string, hostPath: string, readOnly?: boolean }} Mount */
/** @type {{ moduleUrl: string, argv: string[], mounts: Mount[] }} */
const { moduleUrl, argv, mounts } = workerData;
const parent = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
process.argv = [process.execPath, ...argv];

/**
 * Maps a container path to its host path, refusing paths outside every mount.
 * @param {string} containerPath
 */
function resolveMount(containerPath) {
  const norm = posix.resolve('/', containerPath);
  for (const m of [...mounts].sort((a, b) => b.containerPath.length - a.containerPath.length)) {
    const base = m.containerPath.replace(/\/+$/, '');
    if (norm === base || norm.startsWith(`${base}/`)) return m.hostPath + norm.slice(base.length);
  }
  throw new Error(`${containerPath} is not inside a volume mount`);
}
/** @type {any} */ (globalThis).nodelet = Object.freeze({
  mounts: Object.freeze(mounts.map((/** @type {Mount} */ m) => Object.freeze({ ...m }))),
  resolve: resolveMount,
});

// A stop that arrives while the module is still loading is delivered once its
// top-level code has run (so the SIGTERM listener it installs is honoured).
let loaded = false;
let stopRequested = false;
const deliverStop = () => {
  if (process.listenerCount('SIGTERM') > 0) process.emit('SIGTERM', 'SIGTERM');
  else process.exit(143);
};
parent.on('message', (msg) => {
  if (msg !== 'SIGTERM') return;
  if (loaded) deliverStop();
  else stopRequested = true;
});
parent.unref();

await import(moduleUrl);
loaded = true;
if (stopRequested) deliverStop();

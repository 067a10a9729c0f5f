/**
 * One container: a worker thread that imports the container's module. Its
 * stdout/stderr are copied into the CRI log file; its exit code is the one
 * passed to `process.exit` (0 when the module finishes, 1 on an uncaught
 * error). `stop` asks politely (a `SIGTERM` event inside the worker, or exit
 * 143 when the module does not listen), then terminates the thread.
 */
import { Worker } from 'node:worker_threads';
import { CriLogWriter } from '@nodelet/plugin-api/v1/toolkit';

/** Exit code reported for a container terminated after its grace period (as for SIGKILL). */
export const KILLED_EXIT_CODE = 137;
/** Exit code of a module that does not handle the polite stop (as for SIGTERM). */
export const TERMINATED_EXIT_CODE = 143;

const WORKER = new URL('./worker.mjs', import.meta.url);
const MIB = 1024 * 1024;

/**
 * Starts `spec` whose module was copied to `modulePath` (a `.mjs` file).
 * @param {import('@nodelet/plugin-api/v1').ContainerSpec} spec
 * @param {string} modulePath
 * @param {import('@nodelet/plugin-api/v1').Logger} log
 * @param {number} [heapLimitMb]
 * @returns {import('@nodelet/plugin-api/v1').RunningContainer}
 */
export function startJsContainer(spec, modulePath, log, heapLimitMb) {
  const logFile = new CriLogWriter(spec.logPath);
  const memoryMb = spec.limits.memoryBytes !== undefined ? Math.max(4, Math.floor(spec.limits.memoryBytes / MIB)) : heapLimitMb;
  const worker = new Worker(WORKER, {
    workerData: { moduleUrl: new URL(`file://${modulePath}`).href, argv: [...spec.argv], mounts: spec.mounts.map((m) => ({ ...m })) },
    env: { ...spec.env },
    stdout: true,
    stderr: true,
    execArgv: [],
    resourceLimits: memoryMb !== undefined ? { maxOldGenerationSizeMb: memoryMb } : undefined,
    name: `${spec.pod.namespace}/${spec.pod.name}/${spec.name}`,
  });
  worker.stdout.on('data', (c) => logFile.write('stdout', c));
  worker.stderr.on('data', (c) => logFile.write('stderr', c));
  /** @type {Error | undefined} */
  let failure;
  let killed = false;
  worker.on('error', (e) => {
    failure = e;
  });
  /** @type {Promise<import('@nodelet/plugin-api/v1').ContainerExit>} */
  const exit = new Promise((resolve) => {
    worker.once('exit', (code) => {
      const oom = /** @type {{ code?: string } | undefined} */ (failure)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
      if (failure && !oom) logFile.write('stderr', `${failure.stack ?? failure.message}\n`);
      try {
        logFile.close();
      } catch (e) {
        log.warn({ container: spec.name, err: String(e) }, 'closing the log failed');
      }
      const exitCode = oom || killed ? KILLED_EXIT_CODE : code;
      const reason = oom ? 'OOMKilled' : exitCode === 0 ? 'Completed' : 'Error';
      resolve({ exitCode, reason, message: failure && !oom ? failure.message : undefined, finishedAt: new Date() });
    });
  });
  return {
    id: spec.id,
    startedAt: new Date(),
    exit,
    /** @param {number} gracePeriodMs */
    async stop(gracePeriodMs) {
      worker.postMessage('SIGTERM');
      const timer = setTimeout(() => {
        killed = true;
        void worker.terminate();
      }, gracePeriodMs);
      await exit;
      clearTimeout(timer);
    },
  };
}

/**
 * `nodelet run` through the bundled WASI provider itself, for what only the provider
 * runs: WASI 0.2 components (jco, a worker thread) and preview1 modules importing
 * `wasi_experimental_http` (JSPI on a worker). Every other module runs on the CLI's own
 * thread (run-module.ts). Loads the providers as the agent does, starts the module as a
 * container and copies its CRI log to stdout/stderr until it exits:
 *
 *   load WASI provider ─► startContainer ─► copy the CRI log to stdout/stderr until exit
 *                     ─► shutdown ─► exit code
 *
 * The provider writes the container's output to a CRI log file (as for pods); a
 * follower copies each entry to the stream it came from.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { finished as streamFinished } from 'node:stream/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isPodProvider, type ContainerExit, type ContainerSpec, type ImageService, type Mount, type Provider, type PulledImage } from '@nodelet/plugin-api/v1';
import { BUNDLED_PROVIDERS_DIR } from '../config/index.ts';
import { nodeletError } from '../errors/index.ts';
import { createLogger, flushLogger } from '../logging/index.ts';
import { readContainerLog } from '../logs/index.ts';
import { loadProviders, type ServedProvider } from '../providers/index.ts';
import type { RunRequest } from './run-args.ts';

/**
 * Copies the CRI log at `path` to stdout/stderr until `done` settles, then drains it:
 * `core/logs`' follow reader (woken by the log directory's changes) with a per-entry callback.
 * Waits for the file to appear first (the provider creates it as the module starts).
 */
async function followLog(path: string, done: Promise<unknown>): Promise<void> {
  let ended = false;
  void done.then(
    () => (ended = true),
    () => (ended = true),
  );
  for (;;) {
    const exists = await stat(path).then(
      () => true,
      () => false,
    );
    if (exists) break;
    if (ended) return;
    await Promise.race([done, sleep(20)]);
  }
  const stream = await readContainerLog(path, {
    follow: true,
    finished: done,
    onEntry: (e) => (e.stream === 'stderr' ? process.stderr : process.stdout).write(e.partial ? e.content : Buffer.concat([e.content, Buffer.from('\n')])),
  });
  await streamFinished(stream.resume());
}

/** Runs `image` once as a container of the bundled WASI provider; resolves to its exit code. */
export async function runThroughProvider(req: RunRequest, image: PulledImage, programName: string): Promise<number> {
  const work = await mkdtemp(join(tmpdir(), 'nodelet-run-'));
  const ac = new AbortController();
  const log = createLogger({ level: 'warn', name: 'nodelet-run' });
  const noPull: ImageService = {
    pull: () => Promise.reject(nodeletError('NDL_IMAGE_PULL', 'nodelet run hands the provider an already pulled module')),
  };
  // One module, run once, ends with this process: the WASI provider runs it in-process (the default
  // external runtime would outlive `nodelet run` in its temporary directory).
  process.env.NODELET_WASI_RUNTIME = 'in-process';
  const set = await loadProviders({ dirs: [BUNDLED_PROVIDERS_DIR], dataRoot: join(work, 'providers-data'), images: noPull, signal: ac.signal, log });
  const all = set.providers.map((p) => p.provider);
  try {
    const wasi = all.find((p): p is ServedProvider & Provider => !isPodProvider(p) && p.handlers.includes('wasi'));
    if (!wasi) {
      const why = set.failures.map((f) => f.reason).join('; ') || `no WASI provider in ${BUNDLED_PROVIDERS_DIR}`;
      throw nodeletError('NDL_PROVIDER_INIT', why);
    }
    const mounts: Mount[] = req.dirs.map((d, i) => ({ name: `dir-${i}`, hostPath: d.host, containerPath: d.guest, readOnly: false }));
    const spec: ContainerSpec = {
      id: randomUUID(),
      pod: { namespace: 'default', name: 'nodelet-run', uid: randomUUID() },
      name: 'run',
      image,
      argv: [programName, ...req.args],
      env: req.env,
      mounts,
      limits: {},
      logPath: join(work, 'run.log'),
      restartCount: 0,
      ports: [],
      network: { podIPs: [], hostNetwork: true },
    };
    const running = await wasi.startContainer(spec, { log, event: () => {}, signal: ac.signal, podDir: work });
    const stop = () => void running.stop(1_000);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    let exit: ContainerExit;
    try {
      const exited = running.exit;
      await followLog(spec.logPath, exited);
      exit = await exited;
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    }
    if (exit.exitCode !== 0 && exit.message) process.stderr.write(`nodelet run: ${exit.reason}: ${exit.message}\n`);
    return exit.exitCode;
  } finally {
    ac.abort();
    await Promise.allSettled(all.map(async (p) => p.shutdown?.()));
    flushLogger();
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * The external WASI runtime processes that test nodelets spawn (the `wasi` provider's default,
 * `NODELET_WASI_RUNTIME=external`): each runs detached in its own session and outlives its
 * nodelet on purpose, so the tests end them. A test (or harness) that starts nodelet on a root dir
 * calls {@link trackWasiRuntime}; its `dispose` kills the runtime with {@link killWasiRuntime}, and
 * whatever is still tracked when the test process exits — a test file that crashed before its
 * `afterAll` — is killed then, synchronously, by the pid file. A test worker that is itself killed
 * runs no exit hook: with a `listFile` (the e2e global setup's), each root dir is also appended
 * there and {@link killListedWasiRuntimes} ends what is left when the whole run ends. Only runtimes
 * of root dirs a test started are touched, never other processes by name.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { until } from './until.ts';

const tracked = new Set<string>();
let hooked = false;

/** The pid in the WASI runtime's pid file under a nodelet root dir, if any. */
export function wasiRuntimePid(rootDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(rootDir, 'providers-data', 'wasi', 'runtime.pid'), 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** SIGKILLs the runtime's process group (it leads its own session); false when there was none. */
function killGroup(rootDir: string): number | undefined {
  const pid = wasiRuntimePid(rootDir);
  if (pid === undefined) return undefined;
  try {
    process.kill(-pid, 'SIGKILL');
    return pid;
  } catch {
    return undefined; // already gone
  }
}

/** Kills the runtimes still tracked (the test process is exiting). */
function killTracked(): void {
  for (const dir of tracked) killGroup(dir);
  tracked.clear();
}

/**
 * Remembers that nodelet runs on `rootDir`: its runtime is killed when this process exits, if not
 * before; with `listFile`, the root dir is also recorded there for {@link killListedWasiRuntimes}.
 */
export function trackWasiRuntime(rootDir: string, listFile?: string): void {
  tracked.add(rootDir);
  if (listFile) appendFileSync(listFile, `${rootDir}\n`);
  if (hooked) return;
  hooked = true;
  process.once('exit', killTracked);
}

/** Kills the WASI runtime's process group under `rootDir` (if any) and waits until it is gone; forgets the root dir. */
export async function killWasiRuntime(rootDir: string): Promise<void> {
  tracked.delete(rootDir);
  const pid = killGroup(rootDir);
  if (pid === undefined) return;
  const gone = (): boolean => {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  };
  // Up to 5 s; a runtime that outlives that is left to the global teardown's list.
  await until(`the WASI runtime ${pid} gone`, gone, 5000).catch(() => undefined);
}

/** Kills the runtimes of every root dir recorded in `listFile` (see {@link trackWasiRuntime}) that still run. */
export async function killListedWasiRuntimes(listFile: string): Promise<void> {
  let dirs: string[];
  try {
    dirs = readFileSync(listFile, 'utf8').split('\n').filter(Boolean);
  } catch {
    return;
  }
  await Promise.all(dirs.map((d) => killWasiRuntime(d)));
}

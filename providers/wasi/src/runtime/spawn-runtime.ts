/**
 * Starts the WASI runtime process detached, in its own process group (a new
 * session), so that a SIGKILL or SIGTERM of nodelet — or of nodelet's process
 * group — leaves it running. It uses the built entry (dist/runtime/runtime-main.js)
 * with the Node binary nodelet runs on, so it works from `npm start`, the
 * Docker image and the systemd unit alike.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { providerError } from '@nodelet/plugin-api/v1';
import { LOG_FILE_NAME, PID_FILE_NAME } from './protocol.ts';

/** The built entry of the runtime process (from the sources, the matching file under dist/). */
export function runtimeEntry(): string {
  const here = fileURLToPath(import.meta.url);
  const built = here.endsWith('.ts') ? here.replace(/\/src\/runtime\/[^/]+\.ts$/, '/dist/runtime/runtime-main.js') : join(here, '..', 'runtime-main.js');
  if (!existsSync(built)) throw providerError('Unavailable', `the wasi runtime entry ${built} is missing: run npm run build`);
  return built;
}

/** Spawns the runtime for provider root `rootDir`; returns its pid. It writes its own pid file once it serves. */
export function spawnRuntime(rootDir: string): number {
  const out = openSync(join(rootDir, LOG_FILE_NAME), 'a');
  try {
    const child = spawn(process.execPath, ['--max-semi-space-size=2', runtimeEntry(), rootDir], {
      detached: true,
      stdio: ['ignore', out, out],
      env: process.env,
    });
    child.unref();
    if (child.pid === undefined) throw providerError('Unavailable', 'the wasi runtime process could not be started');
    return child.pid;
  } finally {
    closeSync(out);
  }
}

/** The pid in the runtime's pid file under `rootDir`, if any. */
export function runtimePid(rootDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(rootDir, PID_FILE_NAME), 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

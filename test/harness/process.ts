/** Child processes of the test harness: started with logs to files, stopped reliably. */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';

/** A started peer process. */
export interface Peer {
  name: string;
  proc: ChildProcess;
  logFile: string;
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<void>;
}

/** Starts `cmd args` with stdout+stderr appended to `logFile`. `detached` peers outlive this process. */
export function startPeer(name: string, cmd: string, args: string[], logFile: string, opts: { detached?: boolean; env?: NodeJS.ProcessEnv; cwd?: string } = {}): Peer {
  const fd = openSync(logFile, 'a');
  const proc = spawn(cmd, args, { stdio: ['ignore', fd, fd], detached: opts.detached ?? false, env: opts.env ?? process.env, cwd: opts.cwd });
  closeSync(fd);
  if (opts.detached) proc.unref();
  return { name, proc, logFile, stop: (sig, t) => stopProcess(proc, sig, t) };
}

/** Sends `signal`, then SIGKILL after `timeoutMs`; resolves when the process has exited. */
export function stopProcess(proc: ChildProcess, signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 10_000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
    proc.once('exit', () => { clearTimeout(timer); resolve(); });
    proc.kill(signal);
  });
}

/** Polls `check` until it returns true or `timeoutMs` passes (then throws `what`). */
export async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 60_000, everyMs = 250): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  while (Date.now() < deadline) {
    try { if (await check()) return; } catch (e) { lastErr = e; }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastErr ? `: ${String(lastErr)}` : ''}`);
}

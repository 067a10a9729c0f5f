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
export function startPeer(
  name: string,
  cmd: string,
  args: string[],
  logFile: string,
  opts: { detached?: boolean; env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Peer {
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
    proc.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    proc.kill(signal);
  });
}

/**
 * Freezes a peer with SIGSTOP (an outage that keeps its port: connections are
 * accepted by the kernel but nothing answers), or thaws it with SIGCONT.
 */
export function freezePeer(peer: Peer, frozen: boolean): void {
  if (peer.proc.exitCode !== null || peer.proc.signalCode !== null) return;
  peer.proc.kill(frozen ? 'SIGSTOP' : 'SIGCONT');
}

/** Polls `fn` until it returns a truthy value and returns it; throws naming `what` (and the last error) after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 60_000,
  everyMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

/** Polls `check` until it returns true (see {@link eventually}). */
export async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 60_000, everyMs = 250): Promise<void> {
  await eventually(what, check, timeoutMs, everyMs);
}

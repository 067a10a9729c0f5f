/**
 * A started plugin peer and the wait for the socket it creates: fails at once
 * (with the log's tail) when the process exits before the socket appears.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPeer, type Peer } from '../harness/process.ts';

/** A running peer process. */
export interface RunningPeer {
  /** The underlying process handle (pid, exit events). */
  readonly peer: Peer;
  /** stdout+stderr of the peer. */
  readonly logFile: string;
  /** The peer's log so far. */
  log(): string;
  /** SIGTERM, then SIGKILL after `timeoutMs`; resolves when it has exited. */
  stop(timeoutMs?: number): Promise<void>;
}

let counter = 0;

/** A fresh log file path in the temp dir for peer `name`. */
export function peerLogFile(name: string): string {
  return join(tmpdir(), `nodelet-peer-${name}-${process.pid}-${++counter}.log`);
}

/** Starts `cmd args` as peer `name` (logs to `logFile` or a temp file). */
export function runPeer(name: string, cmd: string, args: string[], opts: { logFile?: string; env?: NodeJS.ProcessEnv } = {}): RunningPeer {
  const logFile = opts.logFile ?? peerLogFile(name);
  const peer = startPeer(name, cmd, args, logFile, { env: opts.env });
  return {
    peer,
    logFile,
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
    stop: (timeoutMs = 10_000) => peer.stop('SIGTERM', timeoutMs),
  };
}

/** True when `path` exists and is a unix socket. */
export function isSocket(path: string): boolean {
  try {
    return statSync(path).isSocket();
  } catch {
    return false;
  }
}

/**
 * A predicate that turns true once a socket exists at `path` that was not there
 * when this was called (a stale socket left by an earlier run does not count).
 */
export function newSocketAt(path: string): () => boolean {
  const before = identity(path);
  return () => isSocket(path) && identity(path) !== before;
}

/** inode and change time: tells a re-created file from the old one even if the inode is reused. */
function identity(path: string): string | undefined {
  try {
    const st = statSync(path, { bigint: true });
    return `${st.ino}:${st.ctimeNs}`;
  } catch {
    return undefined;
  }
}

/** Waits until `found()` is true; rejects early if the peer exits first. Stops the peer on failure. */
export async function waitForPeer(p: RunningPeer, what: string, found: () => boolean, timeoutMs = 30_000): Promise<void> {
  const exited = (): boolean => p.peer.proc.exitCode !== null || p.peer.proc.signalCode !== null;
  const deadline = Date.now() + timeoutMs;
  while (!found()) {
    if (exited() || Date.now() > deadline) {
      const how = exited() ? `it exited (${p.peer.proc.exitCode ?? p.peer.proc.signalCode})` : `timed out after ${timeoutMs} ms`;
      await p.stop(2_000);
      const tail = p.log().split('\n').slice(-15).join('\n');
      throw new Error(`${p.peer.name}: no ${what}: ${how}; log ${p.logFile}:\n${tail}`);
    }
    await new Promise((r) => setTimeout(r, 50)); // the poll's interval (it fails early when the peer exits)
  }
}

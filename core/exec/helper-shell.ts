/**
 * Commands run through one long-lived `/bin/sh` helper instead of one
 * `execFile` per call. Spawning a child copies the parent's page tables (libuv
 * forks): from nodelet with a few hundred pods and ~1 GiB RSS that is tens to
 * hundreds of ms **on the main thread** per spawn (the CPU profile of a
 * 100-pod burst had `spawn` as its top self-time function, 22 %, from one `ip`
 * per pod). A helper is spawned once while nodelet is small; the small shell
 * forks the command instead. Each call writes one command line to its stdin
 * and reads one answer line (the output base64-encoded, then the exit status),
 * one call at a time. Users: the pod network's `ip` (`core/network/ip-shell.ts`)
 * and the tmpfs mounter's `mount`/`umount` (`core/volumes/tmpfs.ts`), each with
 * its own helper so neither waits for the other. Hand-written: a dozen lines
 * over child_process; no npm package does "a persistent shell with framed answers".
 *
 *     (none) ── first use / construction ─► RUNNING ── call ─► write line, await answer line
 *                                              │
 *        ◄── shell exits or a call times out (kill) — the next call spawns a new one
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { nodeletError, type ErrorCode } from '../errors/index.ts';

const TIMEOUT_MS = 10_000;

const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;

interface Pending {
  resolve(line: string): void;
  reject(e: unknown): void;
}

/**
 * Runs `command args…` in the helper; resolves with its output (stdout and stderr
 * together, the final newline dropped). A non-zero exit rejects with a NodeletError
 * of the helper's code carrying the output as `stderr` (what `execFile`'s error had).
 */
export type HelperShell = ((command: string, args: readonly string[]) => Promise<string>) & {
  /** Ends the helper shell (a later call spawns a new one). */
  close(): void;
};

/** Options of {@link helperShell}. */
export interface HelperShellOptions {
  /** The code of the errors the helper's calls reject with (the caller's subsystem). */
  readonly errorCode: ErrorCode;
  /** The shell (default `/bin/sh`). */
  readonly shell?: string;
}

/** A {@link HelperShell}; the shell is spawned now (while nodelet is small). */
export function helperShell(o: HelperShellOptions): HelperShell {
  const shell = o.shell ?? '/bin/sh';
  let child: ChildProcessWithoutNullStreams | undefined;
  let buf = '';
  let waiting: Pending | undefined;
  /** The shell the waiting call was written to (an old shell's exit must not fail a call on its successor). */
  let waitingOn: ChildProcessWithoutNullStreams | undefined;
  let chain: Promise<unknown> = Promise.resolve();

  const fail = (e: unknown) => {
    const w = waiting;
    waiting = undefined;
    w?.reject(e);
  };
  const start = (): ChildProcessWithoutNullStreams => {
    const c = spawn(shell, ['-s'], { stdio: ['pipe', 'pipe', 'pipe'] });
    buf = '';
    c.stdout.setEncoding('utf8');
    c.stdout.on('data', (d: string) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const w = waiting;
      waiting = undefined;
      w?.resolve(line);
    });
    c.stderr.resume();
    c.on('error', (e) => {
      if (waitingOn === c) fail(e);
    });
    c.on('exit', (code) => {
      if (child === c) child = undefined;
      if (waitingOn === c) fail(nodeletError(o.errorCode, `the helper shell exited (${code})`));
    });
    // Neither the shell nor its pipes keep nodelet alive; it ends at EOF when nodelet exits.
    c.unref();
    (c.stdin as unknown as { unref?(): void }).unref?.();
    (c.stdout as unknown as { unref?(): void }).unref?.();
    (c.stderr as unknown as { unref?(): void }).unref?.();
    return c;
  };

  const once = (command: string, args: readonly string[]): Promise<string> =>
    new Promise<string>((resolve, reject) => {
      const c = (child ??= start());
      const what = [command, ...args].join(' ');
      const timer = setTimeout(() => {
        fail(nodeletError(o.errorCode, `${what}: no answer within ${TIMEOUT_MS} ms`));
        c.kill('SIGKILL');
        if (child === c) child = undefined;
      }, TIMEOUT_MS);
      waitingOn = c;
      waiting = {
        resolve: (line) => {
          clearTimeout(timer);
          const sp = line.lastIndexOf(' ');
          const out = Buffer.from(line.slice(0, sp), 'base64').toString('utf8').replace(/\n$/, '');
          const rc = Number(line.slice(sp + 1));
          if (rc === 0) resolve(out);
          else reject(Object.assign(nodeletError(o.errorCode, `${what} exited ${rc}: ${out}`), { stderr: out }));
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      // stdout and stderr together (what execFile's error carried as stderr), one base64 line, then the status.
      c.stdin.write(`o=$(${[command, ...args].map(quote).join(' ')} 2>&1 </dev/null); r=$?; printf '%s\\n' "$o" | base64 -w0; printf ' %d\\n' "$r"\n`);
    });

  const run = (command: string, args: readonly string[]): Promise<string> => {
    const p = chain.then(
      () => once(command, args),
      () => once(command, args),
    );
    chain = p.catch(() => undefined);
    return p;
  };
  child = start();
  return Object.assign(run, {
    close: () => {
      child?.stdin.end();
      child = undefined;
    },
  });
}

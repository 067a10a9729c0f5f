/**
 * `ip` run through one long-lived `/bin/sh` helper instead of one `execFile`
 * per call. Spawning a child copies the parent's page tables (libuv forks):
 * from nodelet with a few hundred pods and ~1 GiB RSS that is tens to hundreds
 * of ms **on the main thread** per spawn, and a pod's IP costs one `ip addr
 * replace` at start and one `ip addr del` at deletion (the CPU profile of a
 * 100-pod burst had `spawn` as its top self-time function, 22 %). The helper
 * is spawned once while nodelet is small; each call writes one command line
 * to its stdin and reads one answer line (the output base64-encoded, then the
 * exit status), one call at a time. Hand-written: a dozen lines over
 * child_process; no npm package does "a persistent shell with framed answers".
 *
 *     (none) ── first use / construction ─► RUNNING ── call ─► write line, await answer line
 *                                              │
 *        ◄── shell exits or a call times out (kill) — the next call spawns a new one
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { nodeletError } from '../errors/index.ts';
import type { IpCommand } from './pod-interface.ts';

const TIMEOUT_MS = 10_000;

const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;

interface Pending {
  resolve(line: string): void;
  reject(e: unknown): void;
}

/** An {@link IpCommand} over one helper shell (spawned now); `close()` ends it. */
export function shellIpCommand(shell = '/bin/sh'): IpCommand & { close(): void } {
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
      if (waitingOn === c) fail(nodeletError('NDL_NETWORK_INTERFACE', `the ip helper shell exited (${code})`));
    });
    // Neither the shell nor its pipes keep nodelet alive; it ends at EOF when nodelet exits.
    c.unref();
    (c.stdin as unknown as { unref?(): void }).unref?.();
    (c.stdout as unknown as { unref?(): void }).unref?.();
    (c.stderr as unknown as { unref?(): void }).unref?.();
    return c;
  };

  const once = (args: readonly string[]): Promise<string> =>
    new Promise<string>((resolve, reject) => {
      const c = (child ??= start());
      const timer = setTimeout(() => {
        fail(nodeletError('NDL_NETWORK_INTERFACE', `ip ${args.join(' ')}: no answer within ${TIMEOUT_MS} ms`));
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
          else reject(Object.assign(nodeletError('NDL_NETWORK_INTERFACE', `ip ${args.join(' ')} exited ${rc}: ${out}`), { stderr: out }));
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      // stdout and stderr together (what execFile's error carried as stderr), one base64 line, then the status.
      c.stdin.write(`o=$(ip ${args.map(quote).join(' ')} 2>&1 </dev/null); r=$?; printf '%s\\n' "$o" | base64 -w0; printf ' %d\\n' "$r"\n`);
    });

  const cmd = (args: readonly string[]): Promise<string> => {
    const run = chain.then(
      () => once(args),
      () => once(args),
    );
    chain = run.catch(() => undefined);
    return run;
  };
  child = start();
  return Object.assign(cmd, {
    close: () => {
      child?.stdin.end();
      child = undefined;
    },
  });
}

/**
 * Commands run through one long-lived `/bin/sh` helper instead of one
 * `execFile` per call. Spawning a child copies the parent's page tables (libuv
 * forks): from nodelet with a few hundred pods and ~1 GiB RSS that is tens to
 * hundreds of ms **on the main thread** per spawn (the CPU profile of a
 * 100-pod burst had `spawn` as its top self-time function, 22 %, from one `ip`
 * per pod). A helper is spawned once while nodelet is small; the small shell
 * forks the command instead (one fork and exec per call, nothing else: the
 * answer is framed by the shell's builtins). Each call writes one command line
 * to a shell's stdin and reads one answer (`<status> <bytes>\n<output>\n`);
 * a shell runs one call at a time, and a helper has `size` shells (default 2,
 * one per core here) so that a burst of pods is not one long queue. Users: the pod network's `ip` (`core/network/ip-shell.ts`)
 * and the tmpfs mounter's `mount`/`umount` (`core/volumes/tmpfs.ts`), each with
 * its own helper so neither waits for the other. Hand-written: a dozen lines
 * over child_process; no npm package does "a persistent shell with framed answers".
 *
 * Each shell of the helper:
 *
 *     (none) ── first use / construction ─► RUNNING ── call ─► write line, await answer
 *                                              │
 *        ◄── shell exits or a call times out (kill) — its next call spawns a new one
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { nodeletError, type ErrorCode } from '../errors/index.ts';

const TIMEOUT_MS = 10_000;

const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;

interface Pending {
  resolve(answer: { status: number; output: string }): void;
  reject(e: unknown): void;
}

/**
 * Runs `command args…` in the helper; resolves with its output (stdout and stderr
 * together, the final newline dropped). A non-zero exit rejects with a NodeletError
 * of the helper's code carrying the output as `stderr` (what `execFile`'s error had).
 */
export type HelperShell = ((command: string, args: readonly string[]) => Promise<string>) & {
  /** Ends the helper's shells (a later call spawns new ones). */
  close(): void;
};

/** Options of {@link helperShell}. */
export interface HelperShellOptions {
  /** The code of the errors the helper's calls reject with (the caller's subsystem). */
  readonly errorCode: ErrorCode;
  /** The shell (default `/bin/sh`). */
  readonly shell?: string;
  /** Shells run side by side (default 2). */
  readonly size?: number;
}

/** The answer header: exit status and output length in bytes. */
const HEADER = /^(\d+) (\d+)\n/;

/** One shell of a helper: its calls run one at a time, in order. */
class Shell {
  private child?: ChildProcessWithoutNullStreams;
  private buf: Buffer = Buffer.alloc(0);
  private waiting?: Pending;
  /** The shell the waiting call was written to (an old shell's exit must not fail a call on its successor). */
  private waitingOn?: ChildProcessWithoutNullStreams;
  private chain: Promise<unknown> = Promise.resolve();
  /** Calls queued or running on this shell. */
  load = 0;

  constructor(private readonly o: HelperShellOptions) {}

  private fail(e: unknown): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.reject(e);
  }

  /** Takes one whole answer off the buffer, if there. */
  private answer(): void {
    const h = HEADER.exec(this.buf.subarray(0, 48).toString('latin1'));
    if (!h) return;
    const from = h[0].length;
    const to = from + Number(h[2]);
    if (this.buf.length < to + 1) return;
    const output = this.buf.subarray(from, to).toString('utf8');
    this.buf = this.buf.subarray(to + 1);
    const w = this.waiting;
    this.waiting = undefined;
    w?.resolve({ status: Number(h[1]), output });
  }

  start(): ChildProcessWithoutNullStreams {
    // LC_ALL=C: ${#o} counts bytes in every shell.
    const c = spawn(this.o.shell ?? '/bin/sh', ['-s'], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
    this.child = c;
    this.buf = Buffer.alloc(0);
    c.stdout.on('data', (d: Buffer) => {
      this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
      this.answer();
    });
    c.stderr.resume();
    c.on('error', (e) => {
      if (this.waitingOn === c) this.fail(e);
    });
    c.on('exit', (code) => {
      if (this.child === c) this.child = undefined;
      if (this.waitingOn === c) this.fail(nodeletError(this.o.errorCode, `the helper shell exited (${code})`));
    });
    // Neither the shell nor its pipes keep nodelet alive; it ends at EOF when nodelet exits.
    c.unref();
    (c.stdin as unknown as { unref?(): void }).unref?.();
    (c.stdout as unknown as { unref?(): void }).unref?.();
    (c.stderr as unknown as { unref?(): void }).unref?.();
    return c;
  }

  private once(command: string, args: readonly string[]): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const c = this.child ?? this.start();
      const what = [command, ...args].join(' ');
      const timer = setTimeout(() => {
        this.fail(nodeletError(this.o.errorCode, `${what}: no answer within ${TIMEOUT_MS} ms`));
        c.kill('SIGKILL');
        if (this.child === c) this.child = undefined;
      }, TIMEOUT_MS);
      this.waitingOn = c;
      this.waiting = {
        resolve: ({ status, output }) => {
          clearTimeout(timer);
          const out = output.replace(/\n$/, '');
          if (status === 0) resolve(out);
          else reject(Object.assign(nodeletError(this.o.errorCode, `${what} exited ${status}: ${out}`), { stderr: out }));
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      // stdout and stderr together (what execFile's error carried as stderr); the status, the length, the output.
      c.stdin.write(`o=$(${[command, ...args].map(quote).join(' ')} 2>&1 </dev/null); r=$?; printf '%d %d\\n%s\\n' "$r" "\${#o}" "$o"\n`);
    });
  }

  run(command: string, args: readonly string[]): Promise<string> {
    this.load++;
    const p = this.chain.then(
      () => this.once(command, args),
      () => this.once(command, args),
    );
    this.chain = p.catch(() => undefined);
    void p.then(
      () => this.load--,
      () => this.load--,
    );
    return p;
  }

  close(): void {
    this.child?.stdin.end();
    this.child = undefined;
  }
}

/** A {@link HelperShell}; its shells are spawned now (while nodelet is small). */
export function helperShell(o: HelperShellOptions): HelperShell {
  const shells = Array.from({ length: Math.max(1, o.size ?? 2) }, () => new Shell(o));
  for (const s of shells) s.start();
  // The least loaded shell takes the call (the first of equals).
  const run = (command: string, args: readonly string[]) => shells.reduce((a, b) => (b.load < a.load ? b : a)).run(command, args);
  return Object.assign(run, { close: () => shells.forEach((s) => s.close()) });
}

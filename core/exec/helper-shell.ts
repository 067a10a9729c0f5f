/**
 * Commands run through long-lived `/bin/sh` helpers instead of one
 * `execFile` per call. Spawning a child copies the parent's page tables (libuv
 * forks): from nodelet with a few hundred pods and ~1 GiB RSS that is tens to
 * hundreds of ms **on the main thread** per spawn (the CPU profile of a
 * 100-pod burst had `spawn` as its top self-time function, 22 %, from one `ip`
 * per pod). A helper's shell forks the command instead (one fork and exec per
 * call, nothing else: the answer is framed by the shell's builtins). Each call
 * writes one command line to a shell's stdin (the calls of one tick in one
 * write) and gets one answer (`<status> <bytes>\n<output>\n`);
 * a shell runs its calls one after another, in order, without waiting for
 * nodelet between them (under a burst on a loaded machine each wake-up of a
 * process waits for a CPU, so round trips, not `ip`, were the cost), and a
 * helper has `size` shells (default 2) so that a burst is not one long queue.
 * Users: the pod network's `ip` (`core/network/ip-shell.ts`) and the tmpfs
 * mounter's `mount`/`umount` (`core/volumes/tmpfs.ts`), each with its own
 * helper so neither waits for the other. Hand-written: a small class over
 * child_process; no npm package does "a persistent shell with framed,
 * pipelined answers".
 *
 * A shell is spawned by the first call it takes, and ends itself once it has
 * had nothing to do (no call written, no answer awaited) for `idleMs` (default
 * 30 s); the next call spawns a new one. So an idle node keeps no helper: an
 * idle nodelet's four (three `perl`, ~6 MiB RSS each, and one `sh`, ~1.7 MiB)
 * were ~20 of the 125 MiB of its process tree, which the fleet benchmark
 * compares with kubemark's hollow node (74 MiB; bench/README.md, figure 11).
 * The cost: the first call of each shell after a quiet spell waits for a
 * spawn. Measured (`bench/helper-spawn.ts`, the Perl helper of
 * `mount-syscalls.ts`, medians of 20, three runs on 2 shared cores with a
 * load average of 6): from a process of ~100 MiB RSS the spawn held the main
 * thread 3.5–5 ms and the first call was answered after 10–11 ms; from
 * ~1 GiB, 23–37 ms and 28–43 ms; a call to a running shell, 0.2–0.3 ms.
 * Within a burst the shells stay (its calls come far closer than 30 s). An
 * ending shell is forgotten before its stdin is closed, so a call made while
 * it exits goes to a new shell: ending an idle shell fails no call.
 *
 * Each shell of the helper:
 *
 *     (none) ── a call (spawns it) ─► RUNNING ── call ─► line written now, answer awaited in order
 *                                         │
 *        ◄── nothing to do for idleMs (no call written, no answer awaited): forgotten (a later
 *            call spawns a new one), then its stdin is closed and it exits at EOF (killed if
 *            not within 10 s); no call was written to it, so none fails
 *        ◄── shell exits, or its oldest call gets no answer in 10 s (kill): every call written
 *            to it fails (run or not: none is written again, `mount` must not run twice);
 *            the next call spawns a new one
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Writable } from 'node:stream';
import { nodeletError, type ErrorCode } from '../errors/index.ts';

const TIMEOUT_MS = 10_000;

/** How long a shell with nothing to do lives on (see the module comment). */
const IDLE_MS = 30_000;

const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;

/**
 * Runs `command args…` in the helper; resolves with its output (stdout and stderr
 * together, the final newline dropped). A non-zero exit rejects with a NodeletError
 * of the helper's code carrying the output as `stderr` (what `execFile`'s error had).
 */
export type HelperShell = ((command: string, args: readonly string[]) => Promise<string>) & {
  /** Ends the helper's shells (a later call spawns new ones). */
  close(): void;
};

/**
 * The long-lived program a helper runs instead of `/bin/sh -s`: it reads one `line` per
 * call on stdin and answers each, in order, as the shell does (`<status> <bytes>\n<output>\n`).
 * `core/exec/mount-syscalls.ts` is one: `mount`/`umount` as system calls, without a fork.
 */
export interface HelperProgram {
  /** The program and its arguments. */
  readonly argv: readonly [string, ...string[]];
  /** The stdin line (ending in `\n`) that runs `command args…`. */
  line(command: string, args: readonly string[]): string;
}

/** Options of {@link helperShell}. */
export interface HelperShellOptions {
  /** The code of the errors the helper's calls reject with (the caller's subsystem). */
  readonly errorCode: ErrorCode;
  /** The shell (default `/bin/sh`). */
  readonly shell?: string;
  /** Runs this program instead of the shell (see {@link HelperProgram}). */
  readonly program?: HelperProgram;
  /** Shells run side by side (default 2). */
  readonly size?: number;
  /**
   * How long a shell lives with no call written and no answer awaited before it ends itself
   * (default 30 s; the next call spawns a new one). `Infinity`: it lives until it dies or is closed.
   */
  readonly idleMs?: number;
}

/** The shell's line: stdout and stderr together (what execFile's error carried as stderr); the status, the length, the output. */
const shellLine = (command: string, args: readonly string[]) =>
  `o=$(${[command, ...args].map(quote).join(' ')} 2>&1 </dev/null); r=$?; printf '%d %d\\n%s\\n' "$r" "\${#o}" "$o"\n`;

/** The answer header: exit status and output length in bytes. */
const HEADER = /^(\d+) (\d+)\n/;

/** A call written to a shell, waiting for its answer. */
interface Pending {
  readonly what: string;
  resolve(answer: { status: number; output: string }): void;
  reject(e: unknown): void;
}

/**
 * One shell of a helper. Its calls are written at once (pipelined: the shell reads the
 * next line as soon as it finished the previous command, without a round trip to nodelet)
 * and answered in order. When the shell dies or the oldest call gets no answer in time,
 * every call written to it fails; the next call starts a new shell.
 */
class Shell {
  private child?: ChildProcessWithoutNullStreams;
  private buf: Buffer = Buffer.alloc(0);
  /** Written and not answered yet, oldest first. */
  private readonly pending: Pending[] = [];
  private timer?: NodeJS.Timeout;
  /** The stdin corked until the end of this tick, if any (see {@link write}). */
  private corked?: Writable;

  constructor(private readonly o: HelperShellOptions) {}

  /** Calls written and not answered yet. */
  get load(): number {
    return this.pending.length;
  }

  /**
   * The one timer of the shell: with a call awaiting its answer, the oldest call's answer is due
   * within TIMEOUT_MS of it becoming the oldest; with none, the shell ends after `idleMs`.
   */
  private arm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const head = this.pending[0];
    if (!head) {
      const idleMs = this.o.idleMs ?? IDLE_MS;
      if (this.child && Number.isFinite(idleMs)) {
        this.timer = setTimeout(() => this.endIdle(), idleMs);
        this.timer.unref();
      }
      return;
    }
    this.timer = setTimeout(() => {
      const c = this.child;
      this.failAll(c, nodeletError(this.o.errorCode, `${head.what}: no answer within ${TIMEOUT_MS} ms`));
      c?.kill('SIGKILL');
    }, TIMEOUT_MS);
  }

  /**
   * Ends a shell that has had nothing to do for `idleMs`: it is forgotten first (a call made from
   * now on spawns a new shell and is never written to this one), then its stdin ends and it exits
   * at EOF, having no call to run; one that has not exited within TIMEOUT_MS is killed.
   */
  private endIdle(): void {
    const c = this.child;
    this.timer = undefined;
    if (!c || this.pending.length > 0) return;
    this.child = undefined;
    c.stdin.end();
    const kill = setTimeout(() => c.kill('SIGKILL'), TIMEOUT_MS).unref();
    c.once('exit', () => clearTimeout(kill));
  }

  /**
   * Every call written to shell `c` fails (it is gone): each may have run or not, so none is
   * written again to a new shell (a `mount` must not run twice). The next call starts a new shell.
   */
  private failAll(c: ChildProcessWithoutNullStreams | undefined, e: unknown): void {
    if (c !== undefined && c !== this.child) return; // an old shell: its calls failed already
    this.child = undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const p of this.pending.splice(0)) p.reject(e);
  }

  /** Takes whole answers off the buffer. */
  private answers(): void {
    for (;;) {
      const h = HEADER.exec(this.buf.subarray(0, 48).toString('latin1'));
      if (!h) return;
      const from = h[0].length;
      const to = from + Number(h[2]);
      if (this.buf.length < to + 1) return;
      const output = this.buf.subarray(from, to).toString('utf8');
      this.buf = this.buf.subarray(to + 1);
      const p = this.pending.shift();
      this.arm();
      p?.resolve({ status: Number(h[1]), output });
    }
  }

  private start(): ChildProcessWithoutNullStreams {
    // LC_ALL=C: ${#o} counts bytes in every shell.
    const [cmd, ...argv] = this.o.program?.argv ?? [this.o.shell ?? '/bin/sh', '-s'];
    const c = spawn(cmd, argv, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
    this.child = c;
    this.buf = Buffer.alloc(0);
    c.stdout.on('data', (d: Buffer) => {
      if (this.child !== c) return;
      this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
      this.answers();
    });
    c.stderr.resume();
    c.stdin.on('error', () => undefined); // a dead shell: its exit fails the call
    c.on('error', (e) => {
      if (this.child === c) this.failAll(c, e);
    });
    c.on('exit', (code) => {
      if (this.child === c) this.failAll(c, nodeletError(this.o.errorCode, `the helper shell exited (${code})`));
    });
    // Neither the shell nor its pipes keep nodelet alive; it ends at EOF when nodelet exits.
    c.unref();
    (c.stdin as unknown as { unref?(): void }).unref?.();
    (c.stdout as unknown as { unref?(): void }).unref?.();
    (c.stderr as unknown as { unref?(): void }).unref?.();
    return c;
  }

  run(command: string, args: readonly string[]): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const what = [command, ...args].join(' ');
      const line = (this.o.program?.line ?? shellLine)(command, args);
      this.pending.push({
        what,
        resolve: ({ status, output }) => {
          const out = output.replace(/\n$/, '');
          if (status === 0) resolve(out);
          else reject(Object.assign(nodeletError(this.o.errorCode, `${what} exited ${status}: ${out}`), { stderr: out }));
        },
        reject,
      });
      this.write(line);
      if (this.pending.length === 1) this.arm();
    });
  }

  /**
   * Writes `line` to the shell's stdin, corked until the end of this tick: the calls made in
   * one turn of the event loop (a burst's pods arrive in batches) go in one `writev` and wake
   * the helper once, instead of one pipe write and one wake-up each.
   */
  private write(line: string): void {
    const stdin = (this.child ?? this.start()).stdin;
    if (this.corked !== stdin) {
      this.corked = stdin;
      stdin.cork();
      process.nextTick(() => {
        if (this.corked === stdin) this.corked = undefined;
        stdin.uncork();
      });
    }
    stdin.write(line);
  }

  close(): void {
    const c = this.child;
    this.failAll(c, nodeletError(this.o.errorCode, 'the helper shell was closed'));
    c?.stdin.end();
  }
}

/** A {@link HelperShell}; each of its shells is spawned by the first call it takes, and ends when idle. */
export function helperShell(o: HelperShellOptions): HelperShell {
  const shells = Array.from({ length: Math.max(1, o.size ?? 2) }, () => new Shell(o));
  // The least loaded shell takes the call (the first of equals).
  const run = (command: string, args: readonly string[]) => shells.reduce((a, b) => (b.load < a.load ? b : a)).run(command, args);
  return Object.assign(run, { close: () => shells.forEach((s) => s.close()) });
}

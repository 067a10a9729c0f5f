/**
 * `/attach/{namespace}/{pod}[/{uid}]/{container}` over SPDY, as upstream's
 * remotecommand server (k8s.io/cri-streaming remotecommand/httpstream.go):
 * the client asks with `input`/`output`/`error`/`tty` = `1` and opens one
 * stream per asked channel plus `streamType: error` (and `resize` with a tty
 * on v3+). Once all are there:
 *
 *   streams ready ──► stdout/stderr ← the container's output from now on (its CRI log, followed)
 *        │            stdin  → the provider's `attach` (only when asked, once the log is open at its end;
 *        │                     the provider writes it to the container)
 *        │ not all within 30 s ──► session closed
 *   container exits / client leaves ──► v4: Status JSON on the error stream (Success or
 *                                        "Internal error occurred: error attaching to container: …") ──► session closed
 *
 * Output comes from the log every provider writes (`ContainerSpec.logPath`):
 * its stdout entries to the stdout stream, its stderr entries to the stderr
 * stream (both to stdout when the client asked for one only, e.g. with a tty).
 * Only `stdin` needs the provider (`ProviderBase.attach`).
 */
import type { Readable } from 'node:stream';
import type { Logger, StreamIO } from '@nodelet/plugin-api/v1';
import { CATALOGUE } from '../errors/index.ts';
import { readContainerLog } from '../logs/index.ts';
import type { SpdySession, SpdyStream } from './spdy-session.ts';

/** The remote-command subprotocols served, newest first (upstream's SPDY list without the buggy v1). */
export const ATTACH_PROTOCOLS = ['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io'] as const;

const STREAM_CREATION_TIMEOUT_MS = 30_000;

/** What the client asked for (the query: `input`, `output`, `error`, `tty` = `1`). */
export interface AttachOptions {
  readonly stdin: boolean;
  readonly stdout: boolean;
  readonly stderr: boolean;
  readonly tty: boolean;
}

/** Parses the query; undefined when no channel is asked (upstream: "you must specify at least 1 of stdin, stdout, stderr"). */
export function attachOptions(q: URLSearchParams): AttachOptions | undefined {
  const on = (k: string) => q.get(k) === '1';
  const tty = on('tty');
  const o = { stdin: on('input'), stdout: on('output'), stderr: on('error') && !tty, tty };
  return o.stdin || o.stdout || o.stderr ? o : undefined;
}

/** The container end of an attach. */
export interface AttachTarget {
  /** The log file of the running instance. */
  readonly logFile: string;
  /** Settles when that instance ends. */
  readonly exited?: Promise<unknown>;
  /** False once the instance no longer writes its log. */
  readonly isWriting: () => boolean;
  /** Feeds stdin to the container (the provider's capability); absent: stdin cannot be attached. */
  readonly attach?: (io: StreamIO) => Promise<void>;
  readonly log?: Logger;
}

type Channel = 'error' | 'stdin' | 'stdout' | 'stderr' | 'resize';

/** Handles one attach session: returns the per-stream callback. */
export function attachStreams(session: SpdySession, protocol: string, opts: AttachOptions, target: AttachTarget): (s: SpdyStream) => void {
  const resizing = opts.tty && protocol !== 'v2.channel.k8s.io';
  const expected = 1 + Number(opts.stdin) + Number(opts.stdout) + Number(opts.stderr) + Number(resizing);
  const got: Partial<Record<Channel, SpdyStream>> = {};
  let count = 0;
  const timer = setTimeout(() => session.close(), STREAM_CREATION_TIMEOUT_MS);
  timer.unref();
  return (s) => {
    const type = s.headers['streamtype'] as Channel | undefined;
    if (!type || !['error', 'stdin', 'stdout', 'stderr', 'resize'].includes(type) || got[type]) {
      s.reset();
      return;
    }
    s.reply();
    got[type] = s;
    if (++count < expected) return;
    clearTimeout(timer);
    void run(session, protocol, opts, target, got).catch((e: unknown) => {
      target.log?.debug({ err: e instanceof Error ? e.message : String(e) }, 'attach session failed');
      session.close();
    });
  };
}

async function run(
  session: SpdySession,
  protocol: string,
  opts: AttachOptions,
  target: AttachTarget,
  got: Partial<Record<Channel, SpdyStream>>,
): Promise<void> {
  const ac = new AbortController();
  void session.closed.then(() => ac.abort());
  got.resize?.resume(); // sizes are not used: a WASI module has no terminal
  let failure: string | undefined;
  // With a tty there is no stderr stream: both go to stdout, as a terminal merges them.
  const outs: [SpdyStream, 'stdout' | 'stderr' | undefined][] = [];
  if (got.stdout) outs.push([got.stdout, got.stderr ? 'stdout' : undefined]);
  if (got.stderr) outs.push([got.stderr, got.stdout ? 'stderr' : undefined]);
  // The followers start at the log's end as it is now, and the input reaches the provider only after
  // that: output the container writes in answer to input is never taken for output from before the attach.
  const opened = await Promise.allSettled(outs.map(([, only]) => openOutput(target, only, ac.signal)));
  const failed = opened.find((o) => o.status === 'rejected');
  if (failed) {
    for (const o of opened) if (o.status === 'fulfilled') o.value.destroy();
    throw failed.reason;
  }
  const logs = opened.map((o) => (o as PromiseFulfilledResult<Readable>).value);
  const output = Promise.all(outs.map(([out], i) => copyOutput(logs[i]!, out)));
  let input: Promise<void> = Promise.resolve();
  if (got.stdin && target.attach) {
    const io: StreamIO = {
      stdin: got.stdin,
      stdout: (c) => void got.stdout?.write(c),
      stderr: (c) => void (got.stderr ?? got.stdout)?.write(c),
      tty: opts.tty,
      signal: ac.signal,
    };
    input = target.attach(io).catch((e: unknown) => {
      failure = e instanceof Error ? e.message : String(e);
    });
  } else {
    got.stdin?.resume();
  }
  // The session lasts while the container runs and the client stays.
  await Promise.race([output, target.exited ?? new Promise(() => {}), session.closed]);
  ac.abort();
  got.stdin?.receive(null); // the provider's stdin loop ends even if it does not watch the signal
  await input;
  if (session.ended) return;
  got.stdout?.end();
  got.stderr?.end();
  const error = got.error!;
  if (protocol === 'v4.channel.k8s.io') {
    const status = failure
      ? { metadata: {}, status: 'Failure', message: `Internal error occurred: ${CATALOGUE.NDL_API_ATTACH}: ${failure}`, reason: 'InternalError', code: 500 }
      : { metadata: {}, status: 'Success' };
    error.end(JSON.stringify(status));
  } else {
    error.end(failure ? `${CATALOGUE.NDL_API_ATTACH}: ${failure}` : undefined);
  }
  session.close();
}

/** The container's log (`only` one stream, or both) from its current end, followed until the instance ends or `signal` aborts. */
function openOutput(target: AttachTarget, only: 'stdout' | 'stderr' | undefined, signal: AbortSignal): Promise<Readable> {
  return readContainerLog(target.logFile, {
    stream: only,
    tailLines: 0,
    follow: true,
    finished: target.exited,
    isWriting: target.isWriting,
    signal,
  });
}

/** Copies a followed log to `out` until it ends or `out` is gone. */
async function copyOutput(log: Readable, out: SpdyStream): Promise<void> {
  for await (const chunk of log) {
    if (out.destroyed) break;
    out.write(chunk as Buffer);
  }
}

/**
 * Reads one container instance's CRI log file as `kubectl logs` output.
 *
 * Follow mode, per wake-up (see LogWaker):
 *
 *   read to EOF ──► rotated? (path now names another file) ──► drain old fd, reopen path, offset 0
 *        │          truncated? (size < offset)             ──► offset 0
 *        │          writer finished? ──► one more read to EOF ──► end
 *        └────────► wait (dir change | finished | abort | poll) ──► read again
 *
 * The stream ends when the writer has finished (the container exited), when
 * `limitBytes` is reached, or when the consumer destroys it (client gone).
 */
import path from 'node:path';
import { Readable } from 'node:stream';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { LogFormatter, type FormatOptions } from './log-formatter.ts';
import { tailOffset } from './tail-offset.ts';
import { LogWaker } from './log-waker.ts';
import { parseCriEntry, type CriEntry } from './cri-entry.ts';

/** `PodLogOptions` as the reader understands them (`previous` picks the file; see the server). */
export interface ReadLogOptions extends FormatOptions {
  /** Only the last N lines (a `P`…`F` run is one line). */
  readonly tailLines?: number;
  /** Keep streaming appended lines until the writer finishes. */
  readonly follow?: boolean;
  /** Follow: settles once the writer has finished this file (the container exited). */
  readonly finished?: Promise<unknown>;
  /** Follow: polled while idle; false once nothing more will be appended. */
  readonly isWriting?: () => boolean | Promise<boolean>;
  /** Follow: milliseconds between checks when no change notification arrives (default 1000). */
  readonly pollMs?: number;
  /** Aborting ends the stream (the HTTP client went away). */
  readonly signal?: AbortSignal;
  /**
   * Each parsed entry goes to this callback instead of the formatted output (the stream
   * then yields nothing; read it to the end). `nodelet run` copies entries to stdout/stderr.
   */
  readonly onEntry?: (entry: CriEntry) => void;
}

const CHUNK = 64 * 1024;
const NL = 0x0a;

/**
 * Opens `file` and returns its formatted content as a byte stream. Rejects
 * (with the fs error, e.g. `ENOENT`) if the file cannot be opened, so callers
 * can answer with an error before any output is sent.
 */
export async function readContainerLog(file: string, opts: ReadLogOptions = {}): Promise<Readable> {
  const fh = await open(file, 'r');
  try {
    const { size } = await fh.stat();
    const start = opts.tailLines === undefined ? 0 : await tailOffset(fh, size, opts.tailLines);
    const ac = new AbortController();
    opts.signal?.addEventListener('abort', () => ac.abort(), { once: true });
    return new GeneratorReadable(produce(file, fh, start, opts, ac.signal), ac);
  } catch (e) {
    await fh.close();
    throw e;
  }
}

/** Splits bytes into lines, keeping an unfinished last line for the next chunk. */
class LineSplitter {
  private rest: Buffer = Buffer.alloc(0);

  push(chunk: Buffer, onLine: (line: Buffer) => void): void {
    const buf = this.rest.length ? Buffer.concat([this.rest, chunk]) : chunk;
    let from = 0;
    for (let nl = buf.indexOf(NL, from); nl >= 0; nl = buf.indexOf(NL, from)) {
      onLine(buf.subarray(from, nl));
      from = nl + 1;
    }
    this.rest = Buffer.from(buf.subarray(from));
  }

  /** Hands out the unfinished line, if any (a writer cut short). */
  flush(onLine: (line: Buffer) => void): void {
    if (this.rest.length) onLine(this.rest);
    this.rest = Buffer.alloc(0);
  }
}

type Change = 'none' | 'rotated' | 'truncated';

async function detectChange(file: string, fh: FileHandle, offset: number): Promise<Change> {
  const [cur, now] = await Promise.all([fh.stat(), stat(file).catch(() => undefined)]);
  if (now !== undefined && (now.ino !== cur.ino || now.dev !== cur.dev)) return 'rotated';
  if (cur.size < offset) return 'truncated';
  return 'none';
}

async function* produce(file: string, first: FileHandle, start: number, opts: ReadLogOptions, signal: AbortSignal): AsyncGenerator<Buffer> {
  let fh = first;
  let offset = start;
  const fmt = new LogFormatter(opts);
  const lines = new LineSplitter();
  const out: Buffer[] = [];
  const onEntry = opts.onEntry;
  const onLine = onEntry
    ? (l: Buffer) => {
        const e = parseCriEntry(l);
        if (e) onEntry(e);
      }
    : (l: Buffer) => fmt.push(l, out);
  const take = () => (out.length ? Buffer.concat(out.splice(0)) : undefined);
  const waker = opts.follow ? new LogWaker(path.dirname(file), opts.pollMs ?? 1000, signal, opts.finished) : undefined;
  let finished = false;
  opts.finished?.then(
    () => (finished = true),
    () => (finished = true),
  );
  let lastLook = false; // one more read after the writer finished
  let rotated = false; // drain the old file once more, then reopen
  const buf = Buffer.alloc(CHUNK);
  try {
    while (!signal.aborted) {
      const { bytesRead } = await fh.read(buf, 0, CHUNK, offset);
      if (bytesRead > 0) {
        offset += bytesRead;
        lines.push(buf.subarray(0, bytesRead), onLine);
        const chunk = take();
        if (chunk) yield chunk;
        if (fmt.full) return;
        continue;
      }
      if (!waker || lastLook) break;
      if (rotated) {
        lines.flush(onLine);
        const next = await open(file, 'r').catch(() => undefined);
        if (next) {
          await fh.close();
          fh = next;
          offset = 0;
          rotated = false;
          continue;
        }
      }
      const change = await detectChange(file, fh, offset);
      if (change === 'rotated') {
        rotated = true;
        continue;
      }
      if (change === 'truncated') {
        offset = 0;
        continue;
      }
      if (finished || (opts.isWriting && !(await opts.isWriting()))) {
        lastLook = true;
        continue;
      }
      await waker.wait();
    }
    if (signal.aborted) return;
    lines.flush(onLine);
    const chunk = take();
    if (chunk) yield chunk;
  } finally {
    waker?.close();
    await fh.close().catch(() => undefined);
  }
}

/** A Readable over an async generator that can be destroyed while the generator waits. */
class GeneratorReadable extends Readable {
  private pumping = false;

  constructor(
    private readonly gen: AsyncGenerator<Buffer>,
    private readonly ac: AbortController,
  ) {
    super();
  }

  override _read(): void {
    if (this.pumping) return;
    this.pumping = true;
    void this.pump();
  }

  private async pump(): Promise<void> {
    try {
      for (;;) {
        const r = await this.gen.next();
        if (this.destroyed) return;
        if (r.done) {
          this.push(null);
          return;
        }
        if (!this.push(r.value)) break;
      }
    } catch (e) {
      this.destroy(e as Error);
    } finally {
      this.pumping = false;
    }
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.ac.abort();
    // The generator sees the abort at its next step and closes its file.
    this.gen.return(undefined).catch(() => undefined);
    cb(err);
  }
}

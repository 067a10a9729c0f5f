/**
 * nodelet's logger: pino on stderr, like the upstream kubelet (klog writes to
 * stderr), as JSON lines or klog-style text (`--logging-format`). Writes are
 * asynchronous; call flushLogger() before exit.
 */
import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogFormat, LogLevel } from '../config/index.ts';
import { textDestination } from './text-format.ts';

export type { Logger };

/** Options for {@link createLogger}. */
export interface LoggerOptions {
  level: LogLevel;
  /** Component name, printed as `name` on every line. */
  name?: string;
  /** Where lines go (tests); default stderr. */
  destination?: DestinationStream;
  /** `text` (klog layout) or `json`; default text when stderr is a terminal, else json. */
  format?: LogFormat;
}

/** The format used when none is given: text for a person at a terminal, JSON for files and collectors. */
function defaultLogFormat(): LogFormat {
  return process.stderr.isTTY === true ? 'text' : 'json';
}

let stderr: ReturnType<typeof pino.destination> | undefined;

function stderrDestination(): ReturnType<typeof pino.destination> {
  stderr ??= pino.destination({ fd: 2, sync: false });
  return stderr;
}

/** Creates a logger; loggers without a `destination` share one stderr stream. */
export function createLogger(opts: LoggerOptions): Logger {
  const out = opts.destination ?? stderrDestination();
  const format = opts.format ?? (opts.destination ? 'json' : defaultLogFormat());
  return pino(
    { level: opts.level, ...(opts.name ? { name: opts.name } : {}), base: { pid: process.pid } },
    format === 'text' ? (textDestination(out) as DestinationStream) : out,
  );
}

/** Writes out buffered stderr lines; safe to call before any logger exists or twice. */
export function flushLogger(): void {
  try {
    stderr?.flushSync();
  } catch {
    // Not yet open (nothing written) or already closed: nothing to flush.
  }
}

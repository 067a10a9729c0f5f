/**
 * nodelet's logger: pino JSON lines on stderr, like the upstream kubelet
 * (klog writes to stderr). Writes are asynchronous; call flushLogger() before exit.
 */
import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from '../config/values.ts';

export type { Logger };

/** Options for {@link createLogger}. */
export interface LoggerOptions {
  level: LogLevel;
  /** Component name, printed as `name` on every line. */
  name?: string;
  /** Where lines go (tests); default stderr. */
  destination?: DestinationStream;
}

let stderr: ReturnType<typeof pino.destination> | undefined;

function stderrDestination(): ReturnType<typeof pino.destination> {
  stderr ??= pino.destination({ fd: 2, sync: false });
  return stderr;
}

/** Creates a logger; loggers without a `destination` share one stderr stream. */
export function createLogger(opts: LoggerOptions): Logger {
  return pino(
    { level: opts.level, ...(opts.name ? { name: opts.name } : {}), base: { pid: process.pid } },
    opts.destination ?? stderrDestination(),
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

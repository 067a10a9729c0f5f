/**
 * The WASI runtime's own log (`runtime.log`, JSON lines), size-capped like the
 * CRI container logs: when a line would take the file past `maxBytes`, it is
 * renamed to `runtime.log.1` (the older ones shift to `.2` …, the oldest
 * beyond `files` is dropped) and a new file is started.
 *
 *   open (append, size = current size) ──write──► size + line > max? ──yes──► rotate ──► write
 *
 * Hand-written rather than `rotating-file-stream` or pino's transports: each
 * line is written synchronously (a line logged just before the runtime dies is
 * on disk, as `process.stdout` to a file was), with no stream, worker or
 * dependency in the runtime's start path; it is a rename and an open.
 */
import { closeSync, fstatSync, openSync, renameSync, writeSync } from 'node:fs';

/** The runtime log's size cap per file (10 MiB, as `--container-log-max-size`'s default). */
export const RUNTIME_LOG_MAX_BYTES = 10 * 1024 * 1024;
/** Files kept: `runtime.log` and `runtime.log.1`, `runtime.log.2` (at most 30 MiB in all). */
export const RUNTIME_LOG_FILES = 3;

/** A log file rotated by size (see the module comment). */
export class RotatingLog {
  private fd: number;
  private size: number;

  constructor(
    readonly path: string,
    readonly maxBytes = RUNTIME_LOG_MAX_BYTES,
    readonly files = RUNTIME_LOG_FILES,
  ) {
    this.fd = openSync(path, 'a', 0o600);
    this.size = fstatSync(this.fd).size;
  }

  /** Appends `text` (whole lines), rotating first when it would not fit. Never throws (a log must not end the runtime). */
  write(text: string): void {
    const bytes = Buffer.from(text);
    try {
      if (this.size > 0 && this.size + bytes.length > this.maxBytes) this.rotate();
      writeSync(this.fd, bytes);
      this.size += bytes.length;
    } catch {
      // disk full or the file gone: drop the line
    }
  }

  /** Closes the file. */
  close(): void {
    closeSync(this.fd);
  }

  private rotate(): void {
    closeSync(this.fd);
    for (let i = this.files - 1; i >= 1; i--) {
      try {
        renameSync(i === 1 ? this.path : `${this.path}.${i - 1}`, `${this.path}.${i}`);
      } catch {
        // that one does not exist yet
      }
    }
    // Renamed away above, or (files = 1) emptied here.
    this.fd = openSync(this.path, 'w', 0o600);
    this.size = 0;
  }
}

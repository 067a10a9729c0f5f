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
 *
 * A line the filesystem refuses (a full disk) is dropped whole: the part of it a short
 * write put in the file is cut off again, so the next line does not continue a torn one.
 * A rotation that could not open the new file leaves none open (never a closed descriptor
 * number, which a later open could reuse for another file): the next line opens it again.
 */
import { closeSync, fstatSync, ftruncateSync, openSync, renameSync, writeSync } from 'node:fs';

/** The runtime log's size cap per file (10 MiB, as `--container-log-max-size`'s default). */
export const RUNTIME_LOG_MAX_BYTES = 10 * 1024 * 1024;
/** Files kept: `runtime.log` and `runtime.log.1`, `runtime.log.2` (at most 30 MiB in all). */
export const RUNTIME_LOG_FILES = 3;

/** A log file rotated by size (see the module comment). */
export class RotatingLog {
  /** -1 while no file is open (a rotation failed to open the new one). */
  private fd: number;
  private size: number;
  private closed = false;

  constructor(
    readonly path: string,
    readonly maxBytes = RUNTIME_LOG_MAX_BYTES,
    readonly files = RUNTIME_LOG_FILES,
  ) {
    this.fd = -1;
    this.size = 0;
    this.open();
  }

  /** Appends `text` (whole lines), rotating first when it would not fit. Never throws (a log must not end the runtime). */
  write(text: string): void {
    if (this.closed) return;
    const bytes = Buffer.from(text);
    try {
      if (this.fd < 0) this.open();
      if (this.size > 0 && this.size + bytes.length > this.maxBytes) this.rotate();
    } catch {
      return; // the file cannot be opened: drop the line
    }
    let off = 0;
    try {
      while (off < bytes.length) off += writeSync(this.fd, bytes, off);
      this.size += bytes.length;
    } catch {
      // disk full or the file gone: drop the line, and the part of it written
      if (off > 0) {
        try {
          ftruncateSync(this.fd, this.size);
        } catch {
          // left torn
        }
      }
    }
  }

  /** Closes the file. */
  close(): void {
    this.closed = true;
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }

  private open(): void {
    this.fd = openSync(this.path, 'a', 0o600);
    this.size = fstatSync(this.fd).size;
  }

  private rotate(): void {
    closeSync(this.fd);
    this.fd = -1;
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

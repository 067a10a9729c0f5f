/** A container output stream, as named in CRI log lines. */
export type CriStream = 'stdout' | 'stderr';

/** One parsed CRI log line. */
export interface CriLogLine {
  /** The timestamp as written (RFC3339Nano, nanosecond precision kept). */
  readonly time: string;
  /** The timestamp as a Date (millisecond precision). */
  readonly timestamp: Date;
  readonly stream: CriStream;
  /** True for a `P` (partial) record: the content continues in the next record of the stream. */
  readonly partial: boolean;
  /** The content, without the trailing newline. */
  readonly content: string;
}

/** Options of a {@link CriLogWriter}; the defaults are kubelet's `containerLogMaxSize`/`containerLogMaxFiles`. */
export interface CriLogWriterOptions {
  /** Rotate once the file would grow beyond this many bytes (default 10 MiB). */
  readonly maxBytes?: number;
  /** Files kept per container, the current one included (default 5, so 4 rotated files). */
  readonly maxFiles?: number;
  /** Longest record before a line is split into `P` records (default {@link CRI_MAX_LINE_BYTES}). */
  readonly maxLineBytes?: number;
}

/** Longest record content before containerd splits a line into partial records (16 KiB). */
export declare const CRI_MAX_LINE_BYTES: number;

/**
 * A CRI timestamp: RFC3339Nano in UTC, like Go's `time.RFC3339Nano`
 * (`2026-11-29T23:49:01.123456789Z`, trailing zeros of the fraction dropped).
 * Without arguments: now, with sub-millisecond precision.
 * @param date the instant (millisecond precision)
 * @param nanos the sub-second part in nanoseconds, overriding the date's milliseconds
 */
export declare function criTimestamp(date?: Date, nanos?: number): string;

/**
 * Formats one CRI record: `<time> <stream> <F|P> <content>\n`. `content` must
 * not contain a newline (split it first, as {@link CriLogWriter.write} does).
 */
export declare function formatCriLine(stream: CriStream, partial: boolean, content: string | Uint8Array, time?: string): string;

/**
 * Parses one CRI record (with or without its trailing newline), like kubelet's
 * `parseCRILog`. Returns undefined for a line that is not a CRI record.
 */
export declare function parseCriLine(line: string): CriLogLine | undefined;

/**
 * Splits output bytes into records the way containerd does: one `F` record per
 * newline-terminated line, `P` records for pieces of lines longer than
 * `maxLine` bytes and for a trailing piece without a newline.
 */
export declare function splitCriRecords(bytes: Uint8Array, maxLine?: number): Array<[partial: boolean, content: Uint8Array]>;

/** The UTC `YYYYMMDD-HHMMSS` suffix kubelet appends to a rotated container log. */
export declare function rotationSuffix(date?: Date): string;

/**
 * Writes a container log file in the CRI format, synchronously (one `write(2)`
 * per call, so it is safe in a worker thread that may be terminated at any time).
 *
 * Rotation follows kubelet: before a write would take the file past `maxBytes`,
 * it is renamed to `<path>.<YYYYMMDD-HHMMSS>` (`.<n>` appended if that name is
 * taken), a new file is started, and only the newest `maxFiles - 1` rotated
 * files are kept. Rotated files are not compressed (kubelet gzips older ones).
 */
export declare class CriLogWriter {
  /** Opens (appends to) `path`, creating its directory if needed. */
  constructor(path: string, opts?: CriLogWriterOptions);
  /** The file being written. */
  readonly path: string;
  /**
   * Appends a chunk of a stream's output. Each complete line becomes an `F`
   * record; a chunk not ending with a newline ends with a `P` record (the
   * reader joins it with the next record of the stream), as do the pieces of
   * lines longer than 16 KiB.
   */
  write(stream: CriStream, chunk: Uint8Array | string): void;
  /** Makes what was written durable (`fdatasync`); every `write` already reached the file. */
  flush(): void;
  /** Closes the file; later writes throw. Idempotent. */
  close(): void;
}

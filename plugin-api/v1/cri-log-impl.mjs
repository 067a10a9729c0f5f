// The CRI container log format (what containerd writes and `kubectl logs` reads).
// Plain JavaScript on purpose: worker threads do not inherit tsx's loader hooks,
// loading tsx in every worker doubles its memory, and Node's own type stripping
// refuses files under node_modules, so code that runs inside a provider's
// workers must be loadable by bare Node. Typed with JSDoc (checkJs); the
// package's build emits its declarations (dist/v1/cri-log-impl.d.mts).
import { closeSync, fstatSync, fdatasyncSync, ftruncateSync, mkdirSync, openSync, readdirSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * A container output stream, as named in CRI log lines.
 * @typedef {'stdout' | 'stderr'} CriStream
 */

/**
 * One parsed CRI log line: `time` the timestamp as written (RFC3339Nano,
 * nanosecond precision kept), `timestamp` the same as a Date (millisecond
 * precision), `partial` true for a `P` record (the content continues in the
 * next record of the stream), `content` without the trailing newline.
 * @typedef {{ readonly time: string, readonly timestamp: Date, readonly stream: CriStream, readonly partial: boolean, readonly content: string }} CriLogLine
 */

/**
 * Options of a {@link CriLogWriter}; the defaults are kubelet's
 * `containerLogMaxSize`/`containerLogMaxFiles`: `maxBytes` rotates once the
 * file would grow beyond it (default 10 MiB), `maxFiles` is the files kept per
 * container, the current one included (default 5, so 4 rotated files),
 * `maxLineBytes` the longest record before a line is split into `P` records
 * (default {@link CRI_MAX_LINE_BYTES}).
 * @typedef {{ readonly maxBytes?: number, readonly maxFiles?: number, readonly maxLineBytes?: number }} CriLogWriterOptions
 */

/** Longest record content before containerd splits a line into partial records (16 KiB). */
export const CRI_MAX_LINE_BYTES = 16 * 1024;
const NL = 0x0a;
const ROTATED = /^\d{8}-\d{6}(\.\d+)?$/;

/**
 * A CRI timestamp: RFC3339Nano in UTC, like Go's `time.RFC3339Nano`
 * (`2026-11-29T23:49:01.123456789Z`, trailing zeros of the fraction dropped).
 * Without arguments: now, with sub-millisecond precision.
 * @param {Date} [date] the instant (millisecond precision)
 * @param {number} [nanos] the sub-second part in nanoseconds, overriding the date's milliseconds
 * @returns {string}
 */
export function criTimestamp(date, nanos) {
  /** @type {number} */
  let ms;
  let subNs = 0;
  if (date === undefined) {
    const now = performance.timeOrigin + performance.now();
    ms = Math.floor(now);
    subNs = Math.floor((now - ms) * 1e6);
  } else {
    ms = date.getTime();
  }
  const iso = new Date(ms).toISOString(); // 2026-11-29T23:49:01.123Z
  const ns = nanos !== undefined ? nanos : (((ms % 1000) + 1000) % 1000) * 1e6 + subNs;
  const frac = String(ns).padStart(9, '0').replace(/0+$/, '');
  return iso.slice(0, 19) + (frac ? '.' + frac : '') + 'Z';
}

/**
 * Formats one CRI record: `<time> <stream> <F|P> <content>\n`. `content` must
 * not contain a newline (split it first, as {@link CriLogWriter.write} does).
 * @param {CriStream} stream
 * @param {boolean} partial
 * @param {string | Uint8Array} content
 * @param {string} [time]
 * @returns {string}
 */
export function formatCriLine(stream, partial, content, time = criTimestamp()) {
  checkStream(stream);
  const text = typeof content === 'string' ? content : Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('utf8');
  return `${time} ${stream} ${partial ? 'P' : 'F'} ${text}\n`;
}

/**
 * Parses one CRI record (with or without its trailing newline), like kubelet's
 * `parseCRILog`. Returns undefined for a line that is not a CRI record.
 * @param {string} line
 * @returns {CriLogLine | undefined}
 */
export function parseCriLine(line) {
  if (line.endsWith('\n')) line = line.slice(0, -1);
  const a = line.indexOf(' ');
  if (a <= 0) return undefined;
  const time = line.slice(0, a);
  const timestamp = new Date(time);
  if (Number.isNaN(timestamp.getTime())) return undefined;
  const b = line.indexOf(' ', a + 1);
  if (b < 0) return undefined;
  const stream = line.slice(a + 1, b);
  if (stream !== 'stdout' && stream !== 'stderr') return undefined;
  let c = line.indexOf(' ', b + 1);
  if (c < 0) c = line.length; // an empty full line may lack the separator
  const tags = line.slice(b + 1, c).split(':');
  if (tags[0] !== 'F' && tags[0] !== 'P') return undefined;
  return { time, timestamp, stream, partial: tags[0] === 'P', content: line.slice(c + 1) };
}

/** @param {unknown} stream */
function checkStream(stream) {
  if (stream !== 'stdout' && stream !== 'stderr') throw new TypeError(`CRI log stream must be stdout or stderr, got ${String(stream)}`);
}

/**
 * Splits output bytes into records the way containerd does: one `F` record per
 * newline-terminated line, `P` records for pieces of lines longer than
 * `maxLine` bytes and for a trailing piece without a newline.
 * @param {Uint8Array} bytes
 * @param {number} [maxLine]
 * @returns {Array<[partial: boolean, content: Uint8Array]>}
 */
export function splitCriRecords(bytes, maxLine = CRI_MAX_LINE_BYTES) {
  /** @type {Array<[partial: boolean, content: Uint8Array]>} */
  const out = [];
  let start = 0;
  while (start < bytes.length) {
    const nl = bytes.indexOf(NL, start);
    const end = nl < 0 ? bytes.length : nl;
    let s = start;
    while (end - s > maxLine) {
      out.push([true, bytes.subarray(s, s + maxLine)]);
      s += maxLine;
    }
    if (nl < 0) {
      if (end > s) out.push([true, bytes.subarray(s, end)]);
      break;
    }
    out.push([false, bytes.subarray(s, end)]);
    start = nl + 1;
  }
  return out;
}

/**
 * @param {number} n
 * @param {number} [w]
 */
function pad(n, w = 2) {
  return String(n).padStart(w, '0');
}

/**
 * The UTC `YYYYMMDD-HHMMSS` suffix kubelet appends to a rotated container log.
 * @param {Date} [date]
 * @returns {string}
 */
export function rotationSuffix(date = new Date()) {
  return (
    `${date.getUTCFullYear()}${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())}-` +
    `${pad(date.getUTCHours())}${pad(date.getUTCMinutes())}${pad(date.getUTCSeconds())}`
  );
}

/**
 * Writes a container log file in the CRI format, synchronously (one `write(2)`
 * per call, so it is safe in a worker thread that may be terminated at any time).
 *
 * Rotation follows kubelet: before a write would take the file past `maxBytes`,
 * it is renamed to `<path>.<YYYYMMDD-HHMMSS>` (`.<n>` appended if that name is
 * taken), a new file is started, and only the newest `maxFiles - 1` rotated
 * files are kept. Rotated files are not compressed (kubelet gzips older ones).
 *
 * A write the filesystem refuses (ENOSPC on a full disk, EIO, ...) throws and
 * leaves the file as it was: what part of it reached the file is cut off again,
 * so the file holds whole records only and the next write that fits appends
 * after the last one. A rotation that fails part-way leaves no file open: the
 * next write opens `path` again (and rotates it if it is still too big), so
 * the log resumes once the filesystem takes writes again.
 */
export class CriLogWriter {
  /** @type {string} */
  #path;
  /** @type {number} */
  #maxBytes;
  /** @type {number} */
  #maxFiles;
  /** @type {number} */
  #maxLine;
  /** @type {number | undefined} */
  #fd;
  /** @type {number} */
  #size = 0;
  /** @type {boolean} */
  #closed = false;

  /**
   * Opens (appends to) `path`, creating its directory if needed.
   * @param {string} path
   * @param {CriLogWriterOptions} [opts]
   */
  constructor(path, opts = {}) {
    this.#path = path;
    this.#maxBytes = opts.maxBytes ?? 10 * 1024 * 1024;
    this.#maxFiles = Math.max(1, opts.maxFiles ?? 5);
    this.#maxLine = opts.maxLineBytes ?? CRI_MAX_LINE_BYTES;
    mkdirSync(dirname(path), { recursive: true });
    this.#open();
  }

  /** The file being written. */
  get path() {
    return this.#path;
  }

  /**
   * Appends a chunk of a stream's output. Each complete line becomes an `F`
   * record; a chunk not ending with a newline ends with a `P` record (the
   * reader joins it with the next record of the stream), as do the pieces of
   * lines longer than 16 KiB.
   * @param {CriStream} stream
   * @param {Uint8Array | string} chunk
   * @returns {void}
   */
  write(stream, chunk) {
    checkStream(stream);
    if (this.#closed) throw new Error(`CRI log ${this.#path} is closed`);
    if (this.#fd === undefined) this.#open(); // a rotation failed: open the file again
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (bytes.length === 0) return;
    const time = criTimestamp();
    const head = Buffer.from(`${time} ${stream} `, 'latin1');
    /** @type {Uint8Array[]} */
    const parts = [];
    let len = 0;
    for (const [partial, content] of splitCriRecords(bytes, this.#maxLine)) {
      const rec = [head, partial ? TAG_P : TAG_F, content, NEWLINE];
      const recLen = head.length + 2 + content.length + 1;
      if (this.#size + len + recLen > this.#maxBytes && this.#size + len > 0) {
        this.#writeOut(parts, len);
        parts.length = 0;
        len = 0;
        this.#rotate();
      }
      parts.push(...rec);
      len += recLen;
    }
    this.#writeOut(parts, len);
  }

  /** Makes what was written durable (`fdatasync`); every `write` already reached the file. */
  flush() {
    if (this.#fd !== undefined) fdatasyncSync(this.#fd);
  }

  /** Closes the file; later writes throw. Idempotent. */
  close() {
    this.#closed = true;
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
  }

  #open() {
    this.#fd = openSync(this.#path, 'a', 0o640);
    this.#size = fstatSync(this.#fd).size;
  }

  /**
   * @param {Uint8Array[]} parts
   * @param {number} len their total length
   */
  #writeOut(parts, len) {
    if (len === 0) return;
    const fd = /** @type {number} */ (this.#fd); // write() opened it
    const buf = Buffer.concat(parts, len);
    let off = 0;
    try {
      while (off < buf.length) off += writeSync(fd, buf, off);
    } catch (e) {
      // A short write then a refusal (a full disk) left part of a record: cut it off, so a
      // later record does not continue a torn one.
      if (off > 0) {
        try {
          ftruncateSync(fd, this.#size);
        } catch {
          // the record stays torn; the writer goes on
        }
      }
      throw e;
    }
    this.#size += len;
  }

  #rotate() {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
    if (this.#maxFiles > 1) {
      const rotated = this.#rotatedFiles();
      const stamp = rotationSuffix();
      // Within one second, number the files so that names keep sorting oldest first.
      const same = rotated.filter((f) => f.split('.')[0] === stamp).map((f) => Number(f.split('.')[1] ?? 0) + 1);
      const name = same.length === 0 ? stamp : `${stamp}.${Math.max(...same)}`;
      renameSync(this.#path, `${this.#path}.${name}`);
      rotated.push(name);
      const dir = dirname(this.#path);
      for (const f of rotated.slice(0, Math.max(0, rotated.length - (this.#maxFiles - 1)))) {
        unlinkSync(join(dir, `${basename(this.#path)}.${f}`));
      }
    } else {
      unlinkSync(this.#path);
    }
    this.#open();
  }

  // Rotation suffixes of this log's rotated files, oldest first.
  #rotatedFiles() {
    const prefix = basename(this.#path) + '.';
    return readdirSync(dirname(this.#path))
      .filter((f) => f.startsWith(prefix) && ROTATED.test(f.slice(prefix.length)))
      .map((f) => f.slice(prefix.length))
      .sort(compareRotated);
  }
}

/**
 * Orders rotation suffixes `YYYYMMDD-HHMMSS[.n]` oldest first.
 * @param {string} a
 * @param {string} b
 */
function compareRotated(a, b) {
  const [sa, na = '0'] = a.split('.');
  const [sb, nb = '0'] = b.split('.');
  return sa < sb ? -1 : sa > sb ? 1 : Number(na) - Number(nb);
}

const TAG_F = Buffer.from('F ');
const TAG_P = Buffer.from('P ');
const NEWLINE = Buffer.from('\n');

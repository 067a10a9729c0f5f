// Implementation of the CRI container log format (types and docs: cri-log-impl.d.mts).
// Plain JavaScript on purpose: Node 20 worker threads do not inherit tsx's loader
// hooks, and loading tsx in every worker doubles its memory, so code that runs
// inside a provider's workers must be loadable by bare Node.
import { closeSync, fstatSync, fdatasyncSync, mkdirSync, openSync, readdirSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

export const CRI_MAX_LINE_BYTES = 16 * 1024;
const NL = 0x0a;
const ROTATED = /^\d{8}-\d{6}(\.\d+)?$/;

/** RFC3339Nano like Go's time.RFC3339Nano in UTC (trailing zeros of the fraction dropped). */
export function criTimestamp(date, nanos) {
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

/** One formatted CRI line (with its trailing newline) as a string. */
export function formatCriLine(stream, partial, content, time = criTimestamp()) {
  checkStream(stream);
  const text = typeof content === 'string' ? content : Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('utf8');
  return `${time} ${stream} ${partial ? 'P' : 'F'} ${text}\n`;
}

/** Parses one line of a CRI log file; undefined when it is not one. */
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

function checkStream(stream) {
  if (stream !== 'stdout' && stream !== 'stderr') throw new TypeError(`CRI log stream must be stdout or stderr, got ${String(stream)}`);
}

/** Splits a chunk into CRI records: [partial, bytes][] (bytes without the newline). */
export function splitCriRecords(bytes, maxLine = CRI_MAX_LINE_BYTES) {
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

function pad(n, w = 2) {
  return String(n).padStart(w, '0');
}

/** UTC `YYYYMMDD-HHMMSS`, the suffix kubelet gives rotated container logs. */
export function rotationSuffix(date = new Date()) {
  return (
    `${date.getUTCFullYear()}${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())}-` +
    `${pad(date.getUTCHours())}${pad(date.getUTCMinutes())}${pad(date.getUTCSeconds())}`
  );
}

/** Synchronous CRI log file writer with size-based rotation (usable in worker threads). */
export class CriLogWriter {
  #path;
  #maxBytes;
  #maxFiles;
  #maxLine;
  #fd;
  #size;

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

  write(stream, chunk) {
    checkStream(stream);
    if (this.#fd === undefined) throw new Error(`CRI log ${this.#path} is closed`);
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (bytes.length === 0) return;
    const time = criTimestamp();
    const head = Buffer.from(`${time} ${stream} `, 'latin1');
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

  flush() {
    if (this.#fd !== undefined) fdatasyncSync(this.#fd);
  }

  close() {
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
  }

  #open() {
    this.#fd = openSync(this.#path, 'a', 0o640);
    this.#size = fstatSync(this.#fd).size;
  }

  #writeOut(parts, len) {
    if (len === 0) return;
    const buf = Buffer.concat(parts, len);
    let off = 0;
    while (off < buf.length) off += writeSync(this.#fd, buf, off);
    this.#size += len;
  }

  #rotate() {
    closeSync(this.#fd);
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

// Orders rotation suffixes `YYYYMMDD-HHMMSS[.n]` oldest first.
function compareRotated(a, b) {
  const [sa, na = '0'] = a.split('.');
  const [sb, nb = '0'] = b.split('.');
  return sa < sb ? -1 : sa > sb ? 1 : Number(na) - Number(nb);
}

const TAG_F = Buffer.from('F ');
const TAG_P = Buffer.from('P ');
const NEWLINE = Buffer.from('\n');

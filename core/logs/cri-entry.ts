/**
 * One line of a CRI log file, parsed at the byte level (content may be any bytes):
 *
 *   <RFC3339Nano timestamp> <stdout|stderr> <tags> <content>\n
 *
 * `tags` is `F` (full: the entry ends a line) or `P` (partial: the line goes on in
 * the next entry), possibly followed by `:`-separated extra tags, as in upstream's
 * `pkg/kubelet/kuberuntime/logs/logs.go`. The reader in this folder is its own
 * (plugin-api/v1/cri-log.ts has the writer); both follow the same format.
 */

/** A parsed CRI log entry. */
export interface CriEntry {
  /** The timestamp as an instant (millisecond precision). */
  readonly time: Date;
  /** The timestamp re-printed with exactly nine fraction digits (upstream's RFC3339NanoFixed). */
  readonly timeText: string;
  readonly stream: 'stdout' | 'stderr';
  /** True for a `P` entry: the line continues in the next entry. */
  readonly partial: boolean;
  /** The content, without the trailing newline. */
  readonly content: Buffer;
}

const SPACE = 0x20;
const COLON = 0x3a;
const P = 0x50;
const TIME = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/** Re-prints an RFC 3339 timestamp with nine fraction digits, or returns undefined if it is not one. */
function fixedNanoTime(text: string): { time: Date; text: string } | undefined {
  const m = TIME.exec(text);
  if (!m) return undefined;
  const frac = (m[2] ?? '').padEnd(9, '0');
  const time = new Date(`${m[1]}.${frac.slice(0, 3)}${m[3]}`);
  if (Number.isNaN(time.getTime())) return undefined;
  return { time, text: `${m[1]}.${frac}${m[3]}` };
}

/**
 * Parses one log line (without its `\n`; a trailing `\r` is not special).
 * Returns undefined for a line that is not in CRI format.
 */
export function parseCriEntry(line: Buffer): CriEntry | undefined {
  const s1 = line.indexOf(SPACE);
  if (s1 <= 0) return undefined;
  const s2 = line.indexOf(SPACE, s1 + 1);
  if (s2 < 0) return undefined;
  const stream = line.toString('latin1', s1 + 1, s2);
  if (stream !== 'stdout' && stream !== 'stderr') return undefined;
  let s3 = line.indexOf(SPACE, s2 + 1);
  // An entry with empty content may end right after its tags.
  if (s3 < 0) s3 = line.length;
  const tags = line.toString('latin1', s2 + 1, s3);
  if (tags.length === 0) return undefined;
  const ts = fixedNanoTime(line.toString('latin1', 0, s1));
  if (!ts) return undefined;
  return {
    time: ts.time,
    timeText: ts.text,
    stream,
    partial: tags.split(':')[0] === 'P',
    content: line.subarray(Math.min(s3 + 1, line.length)),
  };
}

/**
 * Reads just the tag of an entry from the first bytes of its line: true for
 * `P`, false for anything else (including a line that is not CRI: such a line
 * ends a logical line, as it would when formatted).
 */
export function isPartialHeader(head: Buffer): boolean {
  const s1 = head.indexOf(SPACE);
  if (s1 <= 0) return false;
  const s2 = head.indexOf(SPACE, s1 + 1);
  if (s2 < 0) return false;
  return head[s2 + 1] === P && (head.length === s2 + 2 || head[s2 + 2] === SPACE || head[s2 + 2] === COLON);
}

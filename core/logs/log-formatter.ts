/**
 * Turns CRI log entries into what `kubectl logs` prints, with the kubelet's
 * `PodLogOptions` semantics (upstream `pkg/kubelet/kuberuntime/logs/logs.go`):
 *
 * - `P` entries are joined with the entries that follow them into one line;
 *   the content is passed on as it arrives (no buffering of long lines).
 * - `timestamps`: each line starts with its first entry's timestamp printed with
 *   nine fraction digits and a space.
 * - `since`: lines whose first entry is older are dropped whole.
 * - `limitBytes`: output stops after that many bytes (possibly mid-line).
 * - `stream`: only stdout or only stderr entries.
 *
 * Lines that are not CRI entries are skipped, as upstream does.
 */
import { parseCriEntry } from './cri-entry.ts';

/** The output options of a log read. */
export interface FormatOptions {
  readonly timestamps?: boolean;
  /** Drop lines that started before this instant. */
  readonly since?: Date;
  /** Stop after this many output bytes. */
  readonly limitBytes?: number;
  /** Only this stream's entries (kubectl attach keeps stdout and stderr apart); default both. */
  readonly stream?: 'stdout' | 'stderr';
}

const NEWLINE = Buffer.from('\n');
const SPACE = Buffer.from(' ');

/** Formats raw log lines one by one; see the module comment. */
export class LogFormatter {
  private inLine = false;
  private dropping = false;
  private left: number;

  constructor(private readonly opts: FormatOptions) {
    this.left = opts.limitBytes ?? Infinity;
  }

  /** True once `limitBytes` have been produced: nothing more will come out. */
  get full(): boolean {
    return this.left <= 0;
  }

  /** Formats one raw line (without its `\n`), appending output to `out`. */
  push(raw: Buffer, out: Buffer[]): void {
    if (this.full) return;
    const e = parseCriEntry(raw);
    if (!e || (this.opts.stream !== undefined && e.stream !== this.opts.stream)) return;
    const starts = !this.inLine;
    this.inLine = e.partial;
    if (starts) this.dropping = this.opts.since !== undefined && e.time < this.opts.since;
    if (this.dropping) return;
    if (starts && this.opts.timestamps) {
      this.emit(Buffer.from(e.timeText, 'latin1'), out);
      this.emit(SPACE, out);
    }
    this.emit(e.content, out);
    if (!e.partial) this.emit(NEWLINE, out);
  }

  private emit(b: Buffer, out: Buffer[]): void {
    if (this.left <= 0 || b.length === 0) return;
    const piece = b.length > this.left ? b.subarray(0, this.left) : b;
    this.left -= piece.length;
    out.push(piece);
  }
}

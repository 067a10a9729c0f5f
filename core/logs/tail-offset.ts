/**
 * Finds where the last N logical lines of a CRI log start, reading the file
 * backwards in blocks (a 200 MB log costs a few blocks, not 200 MB).
 *
 * A logical line is a run of `P` entries closed by an `F` entry; the file may
 * end in an unfinished one (trailing `P` entries, or bytes without `\n` that a
 * writer is still appending), which counts as the last line.
 */
import type { FileHandle } from 'node:fs/promises';
import { isPartialHeader } from './cri-entry.ts';

const BLOCK = 64 * 1024;
/** Bytes kept from the block after the current one, enough for an entry's header. */
const HEAD = 96;
const NL = 0x0a;

/**
 * The byte offset in `fh` (of `size` bytes) where the last `lines` logical
 * lines begin; 0 if the file has fewer, `size` if `lines` is 0.
 */
export async function tailOffset(fh: FileHandle, size: number, lines: number): Promise<number> {
  if (lines <= 0 || size === 0) return size;
  const scan = new BackwardScan(fh, size);
  // Line starts arrive newest first. `end` is where the line just found ends.
  let end = size;
  let wanted = -1;
  let fullSeen = 0;
  for await (const { start, head } of scan.lineStarts()) {
    const complete = end < size || (await endsWithNewline(fh, size));
    const full = complete && !isPartialHeader(head);
    // The newest line decides whether the file ends inside a logical line.
    if (wanted < 0) wanted = full ? lines + 1 : lines;
    if (full && ++fullSeen === wanted) return end;
    end = start;
  }
  return 0;
}

async function endsWithNewline(fh: FileHandle, size: number): Promise<boolean> {
  const b = Buffer.alloc(1);
  await fh.read(b, 0, 1, size - 1);
  return b[0] === NL;
}

/** Walks a file backwards, yielding the start offset (and first bytes) of each line. */
class BackwardScan {
  constructor(
    private readonly fh: FileHandle,
    private readonly size: number,
  ) {}

  async *lineStarts(): AsyncGenerator<{ start: number; head: Buffer }> {
    let carry = Buffer.alloc(0); // the first bytes at `blockEnd`
    let blockEnd = this.size;
    // A newline as the very last byte ends the last line; it starts nothing.
    let skipLastNewline = true;
    while (blockEnd > 0) {
      const blockStart = Math.max(0, blockEnd - BLOCK);
      const block = Buffer.alloc(blockEnd - blockStart);
      await readFully(this.fh, block, blockStart);
      const view = Buffer.concat([block, carry]);
      for (let i = block.length - 1; i >= 0; i--) {
        if (view[i] !== NL) continue;
        if (skipLastNewline && blockStart + i === this.size - 1) continue;
        yield { start: blockStart + i + 1, head: view.subarray(i + 1, i + 1 + HEAD) };
      }
      skipLastNewline = false;
      carry = view.subarray(0, HEAD);
      blockEnd = blockStart;
    }
    yield { start: 0, head: carry };
  }
}

async function readFully(fh: FileHandle, buf: Buffer, position: number): Promise<void> {
  let off = 0;
  while (off < buf.length) {
    const { bytesRead } = await fh.read(buf, off, buf.length - off, position + off);
    if (bytesRead === 0) break;
    off += bytesRead;
  }
}

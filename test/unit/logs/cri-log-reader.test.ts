import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendFile, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { readContainerLog } from '../../../core/logs/cri-log-reader.ts';

let dir: string;
let file: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'crilog-'));
  file = path.join(dir, '0.log');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const T0 = Date.parse('2024-05-01T10:00:00Z');
/** One CRI line, `sec` seconds after T0. */
function entry(sec: number, content: string, tag: 'F' | 'P' = 'F', stream = 'stdout'): string {
  return `${new Date(T0 + sec * 1000).toISOString()} ${stream} ${tag} ${content}\n`;
}

async function readAll(s: Readable): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of s) parts.push(c as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

/** Collects a stream's output and resolves `until(text)` once the text appears. */
function collector(s: Readable) {
  let text = '';
  const waiters: Array<{ needle: string; resolve: () => void }> = [];
  s.on('data', (c: Buffer) => {
    text += c.toString('utf8');
    for (const w of waiters.splice(0)) text.includes(w.needle) ? w.resolve() : waiters.push(w);
  });
  const ended = new Promise<void>((resolve, reject) => {
    s.on('end', resolve);
    s.on('error', reject);
  });
  return {
    get text() {
      return text;
    },
    ended,
    until: (needle: string) => new Promise<void>((resolve) => (text.includes(needle) ? resolve() : waiters.push({ needle, resolve }))),
  };
}

describe('readContainerLog', () => {
  it('joins partial entries into one line and keeps both streams', async () => {
    await writeFile(file, entry(0, 'hel', 'P') + entry(0, 'lo ', 'P') + entry(1, 'world') + entry(2, 'oops', 'F', 'stderr'));
    expect(await readAll(await readContainerLog(file))).toBe('hello world\noops\n');
  });

  it('skips lines that are not CRI entries and keeps an unfinished last line', async () => {
    await writeFile(file, 'garbage\n' + entry(0, 'a') + entry(1, 'cut short').slice(0, -1));
    expect(await readAll(await readContainerLog(file))).toBe('a\ncut short\n');
  });

  it('tails the last N logical lines', async () => {
    await writeFile(file, entry(0, 'one') + entry(1, 'two-a', 'P') + entry(1, 'two-b') + entry(2, 'three'));
    expect(await readAll(await readContainerLog(file, { tailLines: 2 }))).toBe('two-atwo-b\nthree\n');
    expect(await readAll(await readContainerLog(file, { tailLines: 1 }))).toBe('three\n');
    expect(await readAll(await readContainerLog(file, { tailLines: 0 }))).toBe('');
    expect(await readAll(await readContainerLog(file, { tailLines: 10 }))).toBe('one\ntwo-atwo-b\nthree\n');
  });

  it('counts an unfinished trailing line as the last line when tailing', async () => {
    await writeFile(file, entry(0, 'one') + entry(1, 'two') + entry(2, 'thr', 'P'));
    expect(await readAll(await readContainerLog(file, { tailLines: 2 }))).toBe('two\nthr');
  });

  it('tails a file much larger than one read block', async () => {
    const lines: string[] = [];
    for (let i = 0; i < 20000; i++) lines.push(entry(i, `line ${i} ${'x'.repeat(i % 50)}`));
    await writeFile(file, lines.join(''));
    const out = await readAll(await readContainerLog(file, { tailLines: 3 }));
    expect(out).toBe(`line 19997 ${'x'.repeat(47)}\nline 19998 ${'x'.repeat(48)}\nline 19999 ${'x'.repeat(49)}\n`);
  });

  it('prefixes lines with a fixed-width RFC3339Nano timestamp', async () => {
    await writeFile(file, '2024-05-01T10:00:00.5Z stdout P a\n2024-05-01T10:00:01.123456789Z stdout F b\n2024-05-01T10:00:02Z stderr F c\n');
    expect(await readAll(await readContainerLog(file, { timestamps: true }))).toBe('2024-05-01T10:00:00.500000000Z ab\n2024-05-01T10:00:02.000000000Z c\n');
  });

  it('stops after limitBytes, mid-line if need be', async () => {
    await writeFile(file, entry(0, 'abcdef') + entry(1, 'ghijkl'));
    expect(await readAll(await readContainerLog(file, { limitBytes: 9 }))).toBe('abcdef\ngh');
  });

  it('drops lines older than since, whole', async () => {
    await writeFile(file, entry(0, 'old') + entry(9, 'still-', 'P') + entry(11, 'old') + entry(12, 'new'));
    const since = new Date(T0 + 10_000);
    expect(await readAll(await readContainerLog(file, { since }))).toBe('new\n');
  });

  it('rejects with ENOENT for a missing file', async () => {
    await expect(readContainerLog(path.join(dir, '7.log'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('follows appended lines until the writer finishes', async () => {
    await writeFile(file, entry(0, 'before'));
    let finish!: () => void;
    const finished = new Promise<void>((r) => (finish = r));
    const c = collector(await readContainerLog(file, { follow: true, finished, pollMs: 50 }));
    await c.until('before\n');
    await appendFile(file, entry(1, 'after-', 'P'));
    await appendFile(file, entry(1, 'one') + entry(2, 'after-two'));
    await c.until('after-two\n');
    await appendFile(file, entry(3, 'last words'));
    finish();
    await c.ended;
    expect(c.text).toBe('before\nafter-one\nafter-two\nlast words\n');
  });

  it('hands each entry (stream, partial flag, content) to onEntry instead of formatting it, following until the writer finishes', async () => {
    await writeFile(file, 'garbage\n' + entry(0, 'hel', 'P'));
    let finish!: () => void;
    const finished = new Promise<void>((r) => (finish = r));
    const got: string[] = [];
    let wake!: () => void;
    const s = await readContainerLog(file, {
      follow: true,
      finished,
      pollMs: 50,
      onEntry: (e) => {
        got.push(`${e.stream} ${e.partial ? 'P' : 'F'} ${e.content.toString()}`);
        wake?.();
      },
    });
    const c = collector(s);
    await new Promise<void>((r) => (got.length ? r() : (wake = r)));
    await appendFile(file, entry(1, 'lo') + entry(2, 'oops', 'F', 'stderr'));
    finish();
    await c.ended;
    expect(got).toEqual(['stdout P hel', 'stdout F lo', 'stderr F oops']);
    expect(c.text).toBe('');
  });

  it('follows across a rotation (rename + new file)', async () => {
    await writeFile(file, entry(0, 'first'));
    let finish!: () => void;
    const finished = new Promise<void>((r) => (finish = r));
    const c = collector(await readContainerLog(file, { follow: true, finished, pollMs: 50 }));
    await c.until('first\n');
    await appendFile(file, entry(1, 'end of old'));
    await rename(file, `${file}.20240501-100001`);
    await writeFile(file, entry(2, 'start of new'));
    await c.until('start of new\n');
    finish();
    await c.ended;
    expect(c.text).toBe('first\nend of old\nstart of new\n');
  });

  it('ends a follow when isWriting turns false', async () => {
    await writeFile(file, entry(0, 'x'));
    let writing = true;
    const c = collector(await readContainerLog(file, { follow: true, isWriting: () => writing, pollMs: 20 }));
    await c.until('x\n');
    writing = false;
    await c.ended;
    expect(c.text).toBe('x\n');
  });

  it('stops following when the consumer destroys the stream', async () => {
    await writeFile(file, entry(0, 'x'));
    const s = await readContainerLog(file, { follow: true, pollMs: 20 });
    const c = collector(s);
    await c.until('x\n');
    const closed = new Promise<void>((r) => s.on('close', r));
    s.destroy();
    await closed;
    expect(s.destroyed).toBe(true);
  });

  it('ends a follow at limitBytes', async () => {
    await writeFile(file, entry(0, '12345'));
    const c = collector(await readContainerLog(file, { follow: true, limitBytes: 4, pollMs: 20 }));
    await c.ended;
    expect(c.text).toBe('1234');
  });
});

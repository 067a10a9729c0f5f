import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CriLogWriter,
  CRI_LOG_MODULE_URL,
  criTimestamp,
  formatCriLine,
  parseCriLine,
  rotationSuffix,
  splitCriRecords,
} from '../../../plugin-api/v1/toolkit.ts';
import { canMountSmallFs, mountSmallFs } from '../../harness/small-fs.ts';

const LINE = /^(\S+) (stdout|stderr) ([FP]) (.*)$/;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cri-log-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function records(path: string): string[][] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const m = LINE.exec(l);
      if (!m) throw new Error(`not a CRI line: ${l}`);
      return [m[2]!, m[3]!, m[4]!];
    });
}

describe('criTimestamp', () => {
  it('formats RFC3339Nano in UTC and drops trailing zeros like Go', () => {
    const d = new Date(Date.UTC(2026, 10, 29, 23, 49, 1, 120));
    expect(criTimestamp(d)).toBe('2026-11-29T23:49:01.12Z');
    expect(criTimestamp(d, 123456789)).toBe('2026-11-29T23:49:01.123456789Z');
    expect(criTimestamp(d, 0)).toBe('2026-11-29T23:49:01Z');
  });
  it('gives the current time when called without arguments', () => {
    const before = Date.now();
    const t = new Date(criTimestamp()).getTime();
    expect(t).toBeGreaterThanOrEqual(before - 1);
    expect(t).toBeLessThanOrEqual(Date.now() + 1);
  });
});

describe('formatCriLine / parseCriLine', () => {
  it('round-trips a full and a partial record', () => {
    const full = formatCriLine('stdout', false, 'hello world', '2026-11-29T23:49:01.5Z');
    expect(full).toBe('2026-11-29T23:49:01.5Z stdout F hello world\n');
    expect(parseCriLine(full)).toEqual({
      time: '2026-11-29T23:49:01.5Z',
      timestamp: new Date('2026-11-29T23:49:01.5Z'),
      stream: 'stdout',
      partial: false,
      content: 'hello world',
    });
    const part = parseCriLine(formatCriLine('stderr', true, new TextEncoder().encode('a b  c')));
    expect(part).toMatchObject({ stream: 'stderr', partial: true, content: 'a b  c' });
  });
  it('parses an empty line and extra tags', () => {
    expect(parseCriLine('2026-11-29T23:49:01Z stdout F ')).toMatchObject({ content: '', partial: false });
    expect(parseCriLine('2026-11-29T23:49:01Z stdout F')).toMatchObject({ content: '', partial: false });
    expect(parseCriLine('2026-11-29T23:49:01Z stdout P:x y')).toMatchObject({ content: 'y', partial: true });
  });
  it('rejects lines that are not CRI records', () => {
    for (const bad of ['', 'hello', 'notatime stdout F x', '2026-11-29T23:49:01Z stdin F x', '2026-11-29T23:49:01Z stdout X x']) {
      expect(parseCriLine(bad), bad).toBeUndefined();
    }
    expect(() => formatCriLine('stdin' as 'stdout', false, 'x')).toThrow(/stdout or stderr/);
  });
});

describe('splitCriRecords', () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  const dec = (r: Array<[boolean, Uint8Array]>) => r.map(([p, b]) => [p, new TextDecoder().decode(b)]);
  it('makes F records of lines and a P record of a trailing piece', () => {
    expect(dec(splitCriRecords(enc('a\n\nbc\nd')))).toEqual([
      [false, 'a'],
      [false, ''],
      [false, 'bc'],
      [true, 'd'],
    ]);
  });
  it('splits long lines into P records of maxLine bytes', () => {
    expect(dec(splitCriRecords(enc('abcdefg\nxy'), 3))).toEqual([
      [true, 'abc'],
      [true, 'def'],
      [false, 'g'],
      [true, 'xy'],
    ]);
  });
});

describe('CriLogWriter', () => {
  it('writes records per stream, creating the directory', () => {
    const path = join(dir, 'pod', 'c', '0.log');
    const w = new CriLogWriter(path);
    w.write('stdout', 'one\ntwo\n');
    w.write('stderr', new TextEncoder().encode('oops'));
    w.write('stderr', ' more\n');
    w.write('stdout', '');
    w.flush();
    w.close();
    w.close();
    expect(records(path)).toEqual([
      ['stdout', 'F', 'one'],
      ['stdout', 'F', 'two'],
      ['stderr', 'P', 'oops'],
      ['stderr', 'F', ' more'],
    ]);
    expect(() => w.write('stdout', 'x')).toThrow(/closed/);
  });

  it('splits lines longer than 16 KiB like containerd', () => {
    const path = join(dir, '0.log');
    const w = new CriLogWriter(path);
    w.write('stdout', 'x'.repeat(16 * 1024 + 5) + '\n');
    w.close();
    const r = records(path);
    expect(r.map(([, t, c]) => [t, c.length])).toEqual([
      ['P', 16384],
      ['F', 5],
    ]);
  });

  it('appends to an existing file', () => {
    const path = join(dir, '0.log');
    writeFileSync(path, '2026-11-29T23:49:01Z stdout F old\n');
    const w = new CriLogWriter(path);
    w.write('stdout', 'new\n');
    w.close();
    expect(records(path).map((r) => r[2])).toEqual(['old', 'new']);
  });

  it('rotates by size and keeps maxFiles-1 rotated files', () => {
    const path = join(dir, '0.log');
    // Stale rotated files from earlier runs, oldest first; one unrelated file.
    for (const s of ['20200101-000000', '20200101-000001', '20200101-000002']) writeFileSync(`${path}.${s}`, 'old\n');
    writeFileSync(join(dir, 'other.log.20200101-000000'), 'keep\n');
    const w = new CriLogWriter(path, { maxBytes: 200, maxFiles: 3 });
    const lines = Array.from({ length: 20 }, (_, i) => `line-${String(i).padStart(2, '0')}`);
    for (const l of lines) w.write('stdout', `${l}\n`);
    w.close();
    const files = readdirSync(dir).sort();
    const rotated = files.filter((f) => f.startsWith('0.log.'));
    expect(rotated).toHaveLength(2);
    for (const f of rotated) expect(f).toMatch(/^0\.log\.\d{8}-\d{6}(\.\d+)?$/);
    expect(rotated.some((f) => f.startsWith('0.log.2020'))).toBe(false);
    expect(files).toContain('other.log.20200101-000000');
    // Every file stays within the limit and the newest lines are in the current file.
    for (const f of ['0.log', ...rotated]) expect(readFileSync(join(dir, f)).length).toBeLessThanOrEqual(200);
    expect(records(path).at(-1)?.[2]).toBe('line-19');
    // The kept files hold a contiguous tail of the output.
    const kept = [...rotated.sort((a, b) => a.localeCompare(b, 'en', { numeric: true })), '0.log'].flatMap((f) => records(join(dir, f)).map((r) => r[2]));
    expect(kept).toEqual(lines.slice(lines.length - kept.length));
  });

  it('with maxFiles 1 truncates instead of keeping rotated files', () => {
    const path = join(dir, '0.log');
    const w = new CriLogWriter(path, { maxBytes: 100, maxFiles: 1 });
    for (let i = 0; i < 10; i++) w.write('stdout', `line ${i}\n`);
    w.close();
    expect(readdirSync(dir)).toEqual(['0.log']);
    expect(records(path).at(-1)?.[2]).toBe('line 9');
  });

  it('names the rotation suffix in UTC', () => {
    expect(rotationSuffix(new Date(Date.UTC(2026, 0, 2, 3, 4, 5)))).toBe('20260102-030405');
  });

  it('exposes a module URL a bare worker can import', async () => {
    const mod = await import(CRI_LOG_MODULE_URL);
    expect(typeof mod.CriLogWriter).toBe('function');
  });
});

describe('CriLogWriter on a full disk', () => {
  it.skipIf(!canMountSmallFs)('throws ENOSPC with the file ending on a whole record; writes resume once there is space (root: a tmpfs)', () => {
    const fs = mountSmallFs(256 * 1024, 'cri-log-full-');
    try {
      const path = join(fs.dir, 'pod', 'main', '0.log');
      const w = new CriLogWriter(path);
      w.write('stdout', 'first\n');
      fs.fill();
      // 64 KiB chunks of 100-byte lines: the first chunk that does not fit is written in part, then refused.
      const chunk = Array.from({ length: 655 }, (_, i) => `line ${String(i).padStart(4, '0')} ${'x'.repeat(89)}\n`).join('');
      let refused: NodeJS.ErrnoException | undefined;
      for (let i = 0; i < 10 && !refused; i++) {
        try {
          w.write('stdout', chunk);
        } catch (e) {
          refused = e as NodeJS.ErrnoException;
        }
      }
      expect(refused?.code).toBe('ENOSPC');
      const size = statSync(path).size;
      expect(readFileSync(path, 'utf8').endsWith('\n')).toBe(true);
      expect(() => w.write('stdout', chunk)).toThrow(/ENOSPC/);
      expect(statSync(path).size).toBe(size);
      fs.free();
      w.write('stdout', 'after\n');
      w.close();
      const recs = records(path);
      expect(recs[0]).toEqual(['stdout', 'F', 'first']);
      expect(recs.at(-1)).toEqual(['stdout', 'F', 'after']);
      expect(recs.slice(1, -1).every(([, tag, content]) => tag === 'F' && /^line \d{4} x{89}$/.test(content!))).toBe(true);
    } finally {
      fs.cleanup();
    }
  });

  it('a rotation that fails leaves no file open: the next write opens the log again', () => {
    const logDir = join(dir, 'main');
    const path = join(logDir, '0.log');
    const w = new CriLogWriter(path, { maxBytes: 100, maxFiles: 3 });
    w.write('stdout', `${'a'.repeat(60)}\n`);
    rmSync(logDir, { recursive: true }); // the rotation cannot list or rename the directory's files
    expect(() => w.write('stdout', `${'b'.repeat(60)}\n`)).toThrow(/ENOENT/);
    expect(() => w.write('stdout', 'lost\n')).toThrow(/ENOENT/);
    mkdirSync(logDir);
    w.write('stdout', 'back\n');
    w.close();
    expect(records(path)).toEqual([['stdout', 'F', 'back']]);
    expect(() => w.write('stdout', 'closed\n')).toThrow(/is closed/);
  });
});

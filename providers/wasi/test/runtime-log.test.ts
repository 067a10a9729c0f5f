/** The WASI runtime's own log, rotated by size (runtime-log.ts). */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RotatingLog, RUNTIME_LOG_FILES, RUNTIME_LOG_MAX_BYTES } from '../src/index.ts';
import { canMountSmallFs, mountSmallFs } from '../../../test/harness/small-fs.ts';
import { scratch } from './helpers.ts';

const tmp = scratch();
afterAll(() => tmp.cleanup());

describe('RotatingLog', () => {
  it('keeps each file under the cap, shifts older files and drops the oldest beyond the count', () => {
    const path = join(tmp.dir, 'runtime.log');
    writeFileSync(path, 'x'.repeat(90) + '\n'); // a previous runtime's lines: appended to, counted
    const log = new RotatingLog(path, 100, 3);
    for (let i = 0; i < 10; i++) log.write(`line ${i} ${'y'.repeat(40)}\n`); // 48-49 bytes each: two per file
    log.close();
    expect(readFileSync(path, 'utf8')).toBe(`line 8 ${'y'.repeat(40)}\nline 9 ${'y'.repeat(40)}\n`);
    expect(readFileSync(`${path}.1`, 'utf8')).toBe(`line 6 ${'y'.repeat(40)}\nline 7 ${'y'.repeat(40)}\n`);
    expect(readFileSync(`${path}.2`, 'utf8')).toBe(`line 4 ${'y'.repeat(40)}\nline 5 ${'y'.repeat(40)}\n`);
    expect(existsSync(`${path}.3`)).toBe(false);
    for (const f of [path, `${path}.1`, `${path}.2`]) expect(readFileSync(f).length).toBeLessThanOrEqual(100);
  });

  it('with one file, empties it when full; a line longer than the cap is still written whole', () => {
    const path = join(tmp.dir, 'one.log');
    const log = new RotatingLog(path, 10, 1);
    log.write('12345\n');
    log.write('abcdefghijklmnop\n');
    log.write('z\n');
    log.close();
    expect(readFileSync(path, 'utf8')).toBe('z\n');
    expect(existsSync(`${path}.1`)).toBe(false);
  });

  it.skipIf(!canMountSmallFs)('on a full disk drops whole lines (a line cut short is cut off) and writes again once there is space (root: a tmpfs)', () => {
    const fs = mountSmallFs(128 * 1024, 'runtime-log-full-');
    try {
      const path = join(fs.dir, 'runtime.log');
      const log = new RotatingLog(path);
      log.write('{"msg":"first"}\n');
      fs.fill();
      // Lines of 1000 bytes: the last one that fits in the file's last page is cut short, then refused.
      for (let i = 0; i < 20; i++) log.write(`{"msg":"${String(i).padStart(3, '0')} ${'x'.repeat(984)}"}\n`);
      const lines = readFileSync(path, 'utf8').split('\n');
      expect(lines.pop()).toBe('');
      for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
      fs.free();
      log.write('{"msg":"after"}\n');
      log.close();
      const after = readFileSync(path, 'utf8').split('\n').filter(Boolean);
      for (const l of after) expect(() => JSON.parse(l)).not.toThrow();
      expect(after.at(-1)).toBe('{"msg":"after"}');
    } finally {
      fs.cleanup();
    }
  });

  it('a rotation that cannot open the new file keeps no descriptor: the next line opens it again', () => {
    const dir = join(tmp.dir, 'gone');
    mkdirSync(dir);
    const path = join(dir, 'runtime.log');
    const log = new RotatingLog(path, 20, 2);
    log.write('0123456789abcdef\n');
    rmSync(dir, { recursive: true });
    log.write('rotates, fails\n'); // dropped: the new file cannot be made
    mkdirSync(dir);
    log.write('back\n');
    log.close();
    log.write('after close\n');
    expect(readFileSync(path, 'utf8')).toBe('back\n');
  });

  it('defaults to 10 MiB per file and 3 files', () => {
    expect([RUNTIME_LOG_MAX_BYTES, RUNTIME_LOG_FILES]).toEqual([10 * 1024 * 1024, 3]);
  });
});

/** The WASI runtime's own log, rotated by size (runtime-log.ts). */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RotatingLog, RUNTIME_LOG_FILES, RUNTIME_LOG_MAX_BYTES } from '../src/index.ts';
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

  it('defaults to 10 MiB per file and 3 files', () => {
    expect([RUNTIME_LOG_MAX_BYTES, RUNTIME_LOG_FILES]).toEqual([10 * 1024 * 1024, 3]);
  });
});

/** Replacing a state file whole (core/paths/replace-file.ts): the old file or the new one, never a part, and no temporary copy left. */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { replaceFile, replaceFileSync } from '../../../core/paths/index.ts';
import { canMountSmallFs, mountSmallFs } from '../../harness/small-fs.ts';

const dir = mkdtempSync(join(tmpdir(), 'replace-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each([
  ['replaceFile', (f: string, d: string, m?: number) => replaceFile(f, d, m)],
  ['replaceFileSync', async (f: string, d: string, m?: number) => replaceFileSync(f, d, m)],
] as const)('%s', (name, replace) => {
  it('writes a new file and replaces an existing one, with the mode asked (0600 by default)', async () => {
    const file = join(dir, `${name}.json`);
    await replace(file, '{"v":1}');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    await replace(file, '{"v":2}', 0o640);
    expect(readFileSync(file, 'utf8')).toBe('{"v":2}');
    expect(statSync(file).mode & 0o777).toBe(0o640);
    expect(readdirSync(dir).filter((f) => f.startsWith(name))).toEqual([`${name}.json`]);
  });

  it('rejects when the directory is gone, leaving nothing behind', async () => {
    await expect(replace(join(dir, 'missing', `${name}.json`), '{}')).rejects.toThrow(/ENOENT/);
  });

  it.skipIf(!canMountSmallFs)('on a full disk rejects with ENOSPC and leaves the old file whole and no temporary file (root: a tmpfs)', async () => {
    const fs = mountSmallFs(64 * 1024, 'replace-file-full-');
    try {
      const file = join(fs.dir, 'state.json');
      writeFileSync(file, '{"old":true}');
      fs.fill();
      await expect(replace(file, JSON.stringify({ data: 'x'.repeat(32 * 1024) }))).rejects.toMatchObject({ code: 'ENOSPC' });
      expect(readFileSync(file, 'utf8')).toBe('{"old":true}');
      expect(readdirSync(fs.dir).sort()).toEqual(['.filler', 'state.json']);
      fs.free();
      await replace(file, '{"new":true}');
      expect(readFileSync(file, 'utf8')).toBe('{"new":true}');
    } finally {
      fs.cleanup();
    }
  });
});

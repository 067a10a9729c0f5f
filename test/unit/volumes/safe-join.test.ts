import { mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isNodeletError } from '../../../core/errors/catalogue.ts';
import { isWithin, resolveInRoot, safeJoin, validateRelativePath } from '../../../core/paths/safe-join.ts';
import { tempDir } from './fakes.ts';

function escapeDetail(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (isNodeletError(e, 'NDL_PATH_ESCAPE')) return e.detail;
    throw e;
  }
  throw new Error('no error');
}

describe('validateRelativePath', () => {
  it('refuses .. components, absolute and empty paths with upstream wording', () => {
    expect(escapeDetail(() => validateRelativePath('cfg', '../etc/passwd'))).toBe(`cfg: path "../etc/passwd" must not contain '..'`);
    expect(escapeDetail(() => validateRelativePath('cfg', 'a/../../b'))).toBe(`cfg: path "a/../../b" must not contain '..'`);
    expect(escapeDetail(() => validateRelativePath('cfg', '/etc/passwd'))).toBe('cfg: path "/etc/passwd" must be a relative path');
    expect(escapeDetail(() => validateRelativePath('cfg', ''))).toBe('cfg: path "" must not be empty');
    expect(escapeDetail(() => validateRelativePath('cfg', '..data', { forbidDotDotPrefix: true }))).toBe(`cfg: path "..data" must not start with '..'`);
    expect(escapeDetail(() => validateRelativePath('cfg', 'x'.repeat(256)))).toMatch(/filenames must be less than or equal to 255/);
  });

  it('normalises harmless forms and keeps names that merely contain dots', () => {
    expect(validateRelativePath('v', './a//b/')).toBe('a/b');
    expect(validateRelativePath('v', 'a..b/..c')).toBe('a..b/..c');
    expect(validateRelativePath('v', '.', { allowRoot: true })).toBe('.');
    expect(() => validateRelativePath('v', '.')).toThrow(/must name a file/);
  });

  it('safeJoin stays below the root', () => {
    expect(safeJoin('/r', 'v', 'a/b')).toBe('/r/a/b');
    expect(() => safeJoin('/r', 'v', '../x')).toThrow(/must not contain '\.\.'/);
    expect(isWithin('/r', '/r')).toBe(true);
    expect(isWithin('/r', '/r/..x')).toBe(true);
    expect(isWithin('/r', '/rx')).toBe(false);
    expect(isWithin('/r', '/')).toBe(false);
  });
});

describe('resolveInRoot', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let root: string;
  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    dir = await realpath(dir);
    root = path.join(dir, 'vol');
    await mkdir(path.join(root, 'inside/deeper'), { recursive: true });
    await mkdir(path.join(dir, 'outside'));
    await writeFile(path.join(dir, 'outside/secret'), 'host data');
  });
  afterEach(() => cleanup());

  it('refuses a symlink that points outside, absolute or relative, even deep in the path', async () => {
    await symlink(path.join(dir, 'outside'), path.join(root, 'abs'));
    await symlink('../outside', path.join(root, 'rel'));
    await symlink('../../../outside', path.join(root, 'inside/deeper/up'));
    for (const p of ['abs', 'abs/secret', 'rel', 'inside/deeper/up/new/dir']) {
      await expect(resolveInRoot(root, 'data', p, { what: 'subPath', createMode: 0o755 })).rejects.toMatchObject({
        code: 'NDL_PATH_ESCAPE',
        detail: `data: subPath "${p}" resolves outside the volume`,
      });
    }
    // nothing was created outside through the link
    await expect(realpath(path.join(dir, 'outside/new'))).rejects.toThrow();
  });

  it('follows symlinks that stay inside and returns the real path', async () => {
    await symlink('inside/deeper', path.join(root, 'alias'));
    expect(await resolveInRoot(root, 'data', 'alias')).toBe(path.join(root, 'inside/deeper'));
  });

  it('creates missing directories when asked, refuses symlinks when told to', async () => {
    const got = await resolveInRoot(root, 'data', 'inside/new/leaf', { createMode: 0o750 });
    expect(got).toBe(path.join(root, 'inside/new/leaf'));
    await symlink('inside', path.join(root, 'ln'));
    await expect(resolveInRoot(root, 'data', 'ln/x', { noSymlinks: true, createMode: 0o755 })).rejects.toMatchObject({ code: 'NDL_PATH_ESCAPE' });
    await expect(resolveInRoot(root, 'data', 'missing')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses dangling links and a file used as a directory', async () => {
    await symlink('nowhere', path.join(root, 'dangling'));
    await writeFile(path.join(root, 'file'), 'x');
    await expect(resolveInRoot(root, 'data', 'dangling')).rejects.toMatchObject({ detail: 'data: path "dangling" contains a dangling symlink' });
    await expect(resolveInRoot(root, 'data', 'file/x')).rejects.toMatchObject({ code: 'NDL_PATH_ESCAPE' });
  });
});

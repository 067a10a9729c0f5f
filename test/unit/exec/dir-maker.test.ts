import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isNodeletError } from '../../../core/errors/catalogue.ts';
import { dirMaker, type DirMaker } from '../../../core/exec/dir-maker.ts';
import { execFixtures } from './exec-fixtures.ts';

const { scratch, perlHelper } = execFixtures('dir-maker');

/** The two dir makers: through the Perl helper of mount-syscalls.ts (`mkdirs`), and through libuv's pool. */
const makers: [string, () => DirMaker][] = [
  ['through the Perl helper', () => dirMaker(perlHelper())],
  ['through libuv\u2019s pool (no perl)', () => dirMaker(undefined)],
];

describe.each(makers)('dirMaker, %s', (_name, make) => {
  it('makes every missing level of each dir with the mode, and answers the first level it made (undefined: it was there)', async () => {
    const root = await scratch();
    const dirs = make();
    const a = path.join(root, 'pods', 'uid-1');
    const b = path.join(root, 'logs', "ns_it's ünïcode name_uid-1", 'c');
    await mkdir(path.join(root, 'logs'));
    expect(await dirs.make([a, b], 0o750)).toEqual([path.join(root, 'pods'), path.join(root, 'logs', "ns_it's ünïcode name_uid-1")]);
    for (const d of [path.join(root, 'pods'), a, path.dirname(b), b]) expect((await stat(d)).mode & 0o777).toBe(0o750);
    expect(await dirs.make([a, b, root], 0o750)).toEqual([undefined, undefined, undefined]);
    expect(await dirs.make([], 0o750)).toEqual([]);
  });

  it('rejects with NDL_POD_DIRS naming the level and its errno when a file is in the way, and makes the next call', async () => {
    const root = await scratch();
    const dirs = make();
    await writeFile(path.join(root, 'pods'), 'a file where a dir belongs');
    const err = await dirs.make([path.join(root, 'pods', 'uid-1', 'volumes')], 0o750).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isNodeletError(err) && err.code).toBe('NDL_POD_DIRS');
    expect(err).toMatchObject({ errnoCode: 'ENOTDIR', message: expect.stringContaining('ENOTDIR') });
    expect((err as { path: string }).path.startsWith(path.join(root, 'pods'))).toBe(true);
    expect(await dirs.make([path.join(root, 'ok', 'x')], 0o700)).toEqual([path.join(root, 'ok')]);
  });

  it('rejects only once nothing of the call is still being made: what exists at the rejection stays as it is', async () => {
    const root = await scratch();
    const dirs = make();
    await writeFile(path.join(root, 'pods'), 'a file where a dir belongs');
    // Deep dirs beside the failing one: made level by level, they are still in flight when it fails.
    const deep = Array.from({ length: 8 }, (_, i) => path.join(root, 'logs', `c${i}`, ...Array.from({ length: 12 }, (_, j) => `l${j}`)));
    const exists = () =>
      Promise.all(
        deep.map((d) =>
          stat(d).then(
            () => true,
            () => false,
          ),
        ),
      );
    await expect(dirs.make([path.join(root, 'pods', 'uid-1'), ...deep], 0o750)).rejects.toMatchObject({ errnoCode: 'ENOTDIR' });
    const atRejection = await exists();
    await new Promise((r) => setTimeout(r, 100));
    expect(await exists()).toEqual(atRejection);
  });
});

import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isNodeletError } from '../../../core/errors/catalogue.ts';
import { fileWriter, type FileWriter } from '../../../core/exec/file-writer.ts';
import { execFixtures } from './exec-fixtures.ts';

const { scratch, perlHelper } = execFixtures('file-writer');

/** The two writers: through the Perl helper of mount-syscalls.ts (`write-file`), and through libuv's pool. */
const writers: [string, () => FileWriter][] = [
  ['through the Perl helper', () => fileWriter(perlHelper(), 'NDL_NETWORK_STATE')],
  ['through libuv\u2019s pool (no perl)', () => fileWriter(undefined, 'NDL_NETWORK_STATE')],
];

describe.each(writers)('fileWriter, %s', (_name, make) => {
  it('writes the file with the mode, replaces an older one whole, and leaves no temporary file', async () => {
    const root = await scratch();
    const w = make();
    const file = path.join(root, 'pod-ä \u2019q.json');
    await w.replace(file, '{"uid":"a","ips":["10.0.0.2"]}\n', 0o640);
    expect(await readFile(file, 'utf8')).toBe('{"uid":"a","ips":["10.0.0.2"]}\n');
    expect((await stat(file)).mode & 0o777).toBe(0o640 & ~process.umask());
    const big = 'x'.repeat(200_000) + '\n';
    await w.replace(file, big, 0o640);
    expect(await readFile(file, 'utf8')).toBe(big);
    await w.replace(file, 'short\n', 0o600);
    expect(await readFile(file, 'utf8')).toBe('short\n');
    expect(await readdir(root)).toEqual(['pod-ä \u2019q.json']);
  });

  it('rejects with the writer’s code, the errno name and the path, and answers the next call', async () => {
    const root = await scratch();
    const w = make();
    await writeFile(path.join(root, 'file'), 'in the way');
    const err = (await w.replace(path.join(root, 'file', 'x.json'), 'data', 0o640).catch((e: unknown) => e)) as Error & {
      errnoCode: string;
      path: string;
    };
    expect(isNodeletError(err) && err.code).toBe('NDL_NETWORK_STATE');
    expect(err.errnoCode).toBe('ENOTDIR');
    expect(err.path).toBe(path.join(root, 'file', 'x.json.tmp'));
    expect(err.message).toMatch(/ENOTDIR/);
    // A rename that fails (a directory where the file goes) removes the temporary file.
    await mkdir(path.join(root, 'd', 'sub'), { recursive: true });
    const err2 = (await w.replace(path.join(root, 'd'), 'data', 0o640).catch((e: unknown) => e)) as Error & { errnoCode: string };
    expect(isNodeletError(err2) && err2.code).toBe('NDL_NETWORK_STATE');
    expect(err2.errnoCode).toBe('EISDIR');
    expect((await readdir(root)).sort()).toEqual(['d', 'file']);
    await w.replace(path.join(root, 'ok.json'), 'ok\n', 0o640);
    expect(await readFile(path.join(root, 'ok.json'), 'utf8')).toBe('ok\n');
  });
});

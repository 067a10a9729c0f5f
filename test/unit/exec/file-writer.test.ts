import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isNodeletError } from '../../../core/errors/catalogue.ts';
import { fileWriter, type FileWriter } from '../../../core/exec/file-writer.ts';
import { helperShell } from '../../../core/exec/helper-shell.ts';
import { mountSyscalls } from '../../../core/exec/mount-syscalls.ts';

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function scratch(): Promise<string> {
  const root = path.join(tmpdir(), `nodelet-file-writer-${process.pid}-${Date.now()}-${Math.random().toString(16).slice(2)}`);
  await mkdir(root, { recursive: true });
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  return root;
}

/** The two writers: through the Perl helper of mount-syscalls.ts (`write-file`), and through libuv's pool. */
const writers: [string, () => FileWriter][] = [
  [
    'through the Perl helper',
    () => {
      const program = mountSyscalls();
      expect(program, 'this machine has /usr/bin/perl on x64 or arm64').toBeDefined();
      const sh = helperShell({ errorCode: 'NDL_VOLUME_TMPFS', program, size: 1 });
      cleanups.push(sh.close);
      return fileWriter(sh, 'NDL_NETWORK_STATE');
    },
  ],
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

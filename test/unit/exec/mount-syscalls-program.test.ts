/** core/exec/mount-syscalls.pl on its own: spawned with perl and spoken to in its line protocol. */
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isMountPoint } from '../../../core/volumes/csi/mount-info.ts';
import { execFixtures } from './exec-fixtures.ts';
import { hex, lineProgram } from './line-protocol.ts';

const PROGRAM = fileURLToPath(new URL('../../../core/exec/mount-syscalls.pl', import.meta.url));
/** mount(2), umount2(2) and MNT_DETACH, as mount-syscalls.ts passes them. */
const ARGS: Partial<Record<NodeJS.Architecture, string[]>> = { x64: ['165', '166', '2'], arm64: ['40', '39', '2'] };
const args = ARGS[process.arch];
const root = process.getuid?.() === 0;
const { scratch, defer } = execFixtures('mount-syscalls-program');

/** A request line: the command and its arguments, each in hex. */
const line = (...words: string[]) => `${words.map(hex).join(' ')}\n`;

describe.skipIf(!args)('mount-syscalls.pl (skipped on a CPU whose system call numbers it does not know)', () => {
  it('mkdirs and write-file in a temporary dir: the lines written together answered together in one write, no warnings', async () => {
    const dir = await scratch();
    const p = lineProgram(PROGRAM, args);
    const deep = path.join(dir, 'a', 'b é');
    const { answers, chunks } = await p.ask([
      line('mkdirs', '750', deep, path.join(dir, 'c')),
      line('mkdirs', '750', deep),
      line('write-file', '640', path.join(deep, 'f'), 'one\ntwo'),
    ]);
    expect(answers).toEqual([
      { status: 0, output: `${hex(path.join(dir, 'a'))} ${hex(path.join(dir, 'c'))}` },
      { status: 0, output: '-' },
      { status: 0, output: '' },
    ]);
    expect(chunks).toBe(1);
    expect((await stat(deep)).mode & 0o777).toBe(0o750 & ~process.umask());
    expect(await readFile(path.join(deep, 'f'), 'utf8')).toBe('one\ntwo');
    expect((await stat(path.join(deep, 'f'))).mode & 0o777).toBe(0o640 & ~process.umask());
    expect(p.stderr()).toBe('');
  });

  it('answers a bad request with an error and goes on: unknown or malformed lines, bad modes, missing arguments, failed calls', async () => {
    const dir = await scratch();
    await writeFile(path.join(dir, 'file'), 'x');
    const p = lineProgram(PROGRAM, args);
    const { answers } = await p.ask([
      '\n',
      'not hex at all\n',
      line('rm', '-rf', dir),
      line('mkdirs', '0999', dir),
      line('write-file', '644', path.join(dir, 'only-a-path')),
      line('mount', '--bind', dir, dir),
      line('mkdirs', '755', path.join(dir, 'file', 'below')),
      line('write-file', '644', path.join(dir, 'missing', 'f'), 'x'),
      line('mkdirs', '755', path.join(dir, 'after')),
    ]);
    expect(answers.slice(0, 6).map((a) => a.status)).toEqual([2, 2, 2, 2, 2, 2]);
    for (const a of answers.slice(0, 6)) expect(a.output).toMatch(/^unsupported: /);
    expect(answers[2]!.output).toBe(`unsupported: rm -rf ${dir}`);
    expect(answers[6]).toEqual({ status: 1, output: `mkdirs: ${path.join(dir, 'file', 'below')}: 20 Not a directory` });
    expect(answers[7]).toEqual({ status: 1, output: `write-file: ${path.join(dir, 'missing', 'f')}.tmp: 2 No such file or directory` });
    expect(answers[8]).toEqual({ status: 0, output: hex(path.join(dir, 'after')) });
    expect(p.stderr()).toBe('');
  });

  it.skipIf(!root)('as root: mounts a tmpfs, refuses to unmount a plain dir, unmounts it (skipped when not root: mount(2) needs CAP_SYS_ADMIN)', async () => {
    const dir = path.join(await scratch(), 'tmpfs é');
    await mkdir(dir);
    const p = lineProgram(PROGRAM, args);
    const mounted = await p.ask([line('mount', '-t', 'tmpfs', '-o', 'mode=0700,size=1048576', 'tmpfs', dir)]);
    expect(mounted.answers).toEqual([{ status: 0, output: '' }]);
    defer(() => lineProgram(PROGRAM, args).ask([line('umount', '-l', dir)]));
    expect(await isMountPoint(dir)).toBe(true);
    expect((await stat(dir)).mode & 0o7777).toBe(0o700);
    const { answers } = await p.ask([line('umount', dir), line('umount', dir), line('umount-mounted', dir)]);
    expect(answers).toEqual([
      { status: 0, output: '' },
      { status: 32, output: `umount: ${dir}: Invalid argument` },
      { status: 0, output: '-' },
    ]);
    expect(await isMountPoint(dir)).toBe(false);
    expect(p.stderr()).toBe('');
  });
});

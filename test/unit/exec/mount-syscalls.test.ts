import { mkdir, open, readFile, stat, statfs, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isNodeletError } from '../../../core/errors/catalogue.ts';
import { mountSyscalls } from '../../../core/exec/mount-syscalls.ts';
import { isMountPoint } from '../../../core/volumes/csi/mount-info.ts';
import { execFixtures } from './exec-fixtures.ts';

const { scratch, perlHelper, defer } = execFixtures('mount-syscalls');

async function helper() {
  const sh = perlHelper();
  return { sh, root: await scratch() };
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as Error & { stderr?: string },
  );

describe('mountSyscalls', () => {
  it('is there only where it can work: perl present and a CPU whose system call numbers it knows', () => {
    expect(mountSyscalls({ arch: 'x64' })?.argv[0]).toBe('/usr/bin/perl');
    expect(mountSyscalls({ arch: 'arm64' })?.argv.slice(-3)).toEqual(['40', '39', '2']);
    expect(mountSyscalls({ arch: 'ia32' })).toBeUndefined();
    expect(mountSyscalls({ perl: '/nonexistent/perl' })).toBeUndefined();
  });

  it('refuses what it does not implement instead of guessing (status 2), and answers the next call', async () => {
    const { sh, root } = await helper();
    for (const [cmd, args] of [
      ['mount', ['--bind', root, root]],
      ['umount', ['-f', root]],
      ['rm', ['-rf', root]],
    ] as const) {
      const e = await failure(sh(cmd, args));
      expect(isNodeletError(e, 'NDL_VOLUME_TMPFS')).toBe(true);
      expect(e?.message).toContain('exited 2');
      expect(e?.stderr).toMatch(/^unsupported: /);
    }
    const gone = path.join(root, 'missing dir');
    const e = await failure(sh('umount', [gone]));
    expect(e?.stderr).toBe(`umount: ${gone}: ${process.getuid?.() === 0 ? 'No such file or directory' : 'Operation not permitted'}`);
  });

  it('answers the calls written together each in its turn: a refusal or a failure among them changes no other answer', async () => {
    const { sh, root } = await helper();
    await writeFile(path.join(root, 'file'), 'x');
    const calls = [
      sh('mkdirs', ['0750', path.join(root, 'a', 'b')]),
      failure(sh('rm', ['-rf', root])),
      failure(sh('mkdirs', ['0750', path.join(root, 'file', 'below')])),
      sh('write-file', ['0640', path.join(root, 'a', 'rec'), 'data\nwith a newline']),
      sh('mkdirs', ['0750', path.join(root, 'a', 'b'), path.join(root, 'c')]),
    ];
    const [made, refused, inTheWay, written, again] = await Promise.all(calls);
    expect(made).toBe(Buffer.from(path.join(root, 'a')).toString('hex'));
    expect((refused as Error & { stderr?: string })?.stderr).toMatch(/^unsupported: rm /);
    expect((inTheWay as Error & { stderr?: string })?.stderr).toBe(`mkdirs: ${path.join(root, 'file', 'below')}: 20 Not a directory`);
    expect(written).toBe('');
    expect(await readFile(path.join(root, 'a', 'rec'), 'utf8')).toBe('data\nwith a newline');
    expect(again).toBe(`- ${Buffer.from(path.join(root, 'c')).toString('hex')}`);
  });

  it.skipIf(process.getuid?.() !== 0)('real tmpfs mounts: mode, size, any path; busy, then detached (skipped when not root: needs CAP_SYS_ADMIN)', async () => {
    const { sh, root } = await helper();
    const dir = path.join(root, "it's a dir é");
    await mkdir(dir);
    expect(await sh('mount', ['-t', 'tmpfs', '-o', 'mode=0710,size=2097152', 'tmpfs', dir])).toBe('');
    defer(() => sh('umount', ['-l', dir]).catch(() => undefined));
    expect(await isMountPoint(dir)).toBe(true);
    expect((await stat(dir)).mode & 0o7777).toBe(0o710);
    const fs = await statfs(dir);
    expect(fs.blocks * fs.bsize).toBe(2 * 1024 * 1024);
    await writeFile(path.join(dir, 'x'), 'in memory');

    const missing = path.join(root, 'missing');
    const e = await failure(sh('mount', ['-t', 'tmpfs', '-o', 'mode=0700', 'tmpfs', missing]));
    expect(e?.message).toContain('exited 32');
    expect(e?.stderr).toBe(`mount: ${missing}: No such file or directory`);

    const fd = await open(path.join(dir, 'x'));
    try {
      const busy = await failure(sh('umount', [dir]));
      expect(busy?.stderr).toBe(`umount: ${dir}: Device or resource busy`);
      expect(await sh('umount', ['-l', dir])).toBe('');
      expect(await isMountPoint(dir)).toBe(false);
    } finally {
      await fd.close();
    }
    const notMounted = await failure(sh('umount', [dir]));
    expect(notMounted?.stderr).toBe(`umount: ${dir}: Invalid argument`);
  });

  it.skipIf(process.getuid?.() !== 0)(
    'umount-mounted: unmounts a mount point (+), answers - for a plain or missing dir, fails as umount on a busy one (skipped if not root: CAP_SYS_ADMIN)',
    async () => {
      const { sh, root } = await helper();
      const dir = path.join(root, 'vol é');
      await mkdir(dir);
      expect(await sh('umount-mounted', [dir])).toBe('-');
      expect(await sh('umount-mounted', [path.join(root, 'missing')])).toBe('-');
      expect(await sh('mount', ['-t', 'tmpfs', '-o', 'mode=0700', 'tmpfs', dir])).toBe('');
      defer(() => sh('umount', ['-l', dir]).catch(() => undefined));
      const fd = await open(path.join(dir, 'x'), 'w');
      try {
        const busy = await failure(sh('umount-mounted', [dir]));
        expect(busy?.message).toContain('exited 32');
        expect(busy?.stderr).toBe(`umount: ${dir}: Device or resource busy`);
        expect(await isMountPoint(dir)).toBe(true);
      } finally {
        await fd.close();
      }
      expect(await sh('umount-mounted', [dir])).toBe('+');
      expect(await isMountPoint(dir)).toBe(false);
      expect(await sh('umount-mounted', [dir])).toBe('-');
    },
  );

  it.skipIf(process.getuid?.() !== 0)(
    'mount-new: a new dir made and mounted in one call, none over an old one (skipped if not root: CAP_SYS_ADMIN)',
    async () => {
      const { sh, root } = await helper();
      const dir = path.join(root, 'pods', 'uid', 'volumes', 'kubernetes.io~projected', 'tok é');
      const hex = (p: string) => Buffer.from(p, 'utf8').toString('hex');
      expect(await sh('mount-new', ['777', '-t', 'tmpfs', '-o', 'mode=0750', 'tmpfs', dir])).toBe(hex(path.join(root, 'pods')));
      defer(() => sh('umount', ['-l', dir]).catch(() => undefined));
      expect(await isMountPoint(dir)).toBe(true);
      expect((await stat(dir)).mode & 0o7777).toBe(0o750);
      // There already (mounted or not): nothing is mounted over it.
      expect(await sh('mount-new', ['777', '-t', 'tmpfs', '-o', 'mode=0700', 'tmpfs', dir])).toBe('-');
      expect((await stat(dir)).mode & 0o7777).toBe(0o750);
      const plain = path.join(root, 'plain');
      await mkdir(plain);
      expect(await sh('mount-new', ['777', '-t', 'tmpfs', '-o', 'mode=0700', 'tmpfs', plain])).toBe('-');
      expect(await isMountPoint(plain)).toBe(false);
      // A file in the way: mkdirs' answer, nothing mounted; a bad mount: mount's.
      await writeFile(path.join(root, 'file'), 'x');
      const e = await failure(sh('mount-new', ['777', '-t', 'tmpfs', '-o', 'mode=0700', 'tmpfs', path.join(root, 'file', 'd')]));
      expect(e?.message).toContain('exited 1');
      expect(e?.stderr).toBe(`mkdirs: ${path.join(root, 'file', 'd')}: 20 Not a directory`);
      const bad = path.join(root, 'bad');
      const m = await failure(sh('mount-new', ['777', '-t', 'no-such-fs', '-o', '', 'none', bad]));
      expect(m?.message).toContain('exited 32');
      expect(m?.stderr).toBe(`mount: ${bad}: No such device`);
    },
  );
});

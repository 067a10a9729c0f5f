// terminated.message: the termination message file inside the container's mounts, the
// FallbackToLogsOnError log tail, and the runtime message joined like upstream.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { V1Container } from '@kubernetes/client-node';
import type { Mount } from '@nodelet/plugin-api/v1';
import { terminationMessage } from '../../../core/pods/termination-message.ts';

const root = mkdtempSync(join(tmpdir(), 'nodelet-term-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function setup(name: string, logLines: string[] = []) {
  const vol = join(root, name, 'vol');
  mkdirSync(vol, { recursive: true });
  const logPath = join(root, name, '0.log');
  writeFileSync(logPath, logLines.map((l) => `2026-01-01T00:00:00.000000000Z stdout F ${l}\n`).join(''));
  const mounts: Mount[] = [{ name: 'term', containerPath: '/dev', hostPath: vol, readOnly: false }];
  return { vol, logPath, mounts };
}
const c = (over: Partial<V1Container> = {}): V1Container => ({
  name: 'main',
  terminationMessagePath: '/dev/termination-log',
  terminationMessagePolicy: 'File',
  ...over,
});

describe('terminationMessage', () => {
  it('reads the file at terminationMessagePath inside a mount, keeping its last 4096 bytes', async () => {
    const s = setup('file');
    writeFileSync(join(s.vol, 'termination-log'), 'all done');
    expect(await terminationMessage(c(), { exitCode: 0 }, s.mounts, s.logPath)).toBe('all done');
    writeFileSync(join(s.vol, 'termination-log'), `${'x'.repeat(5000)}END`);
    const long = await terminationMessage(c(), { exitCode: 1 }, s.mounts, s.logPath);
    expect(long).toHaveLength(4096);
    expect(long!.endsWith('END')).toBe(true);
  });

  it('joins the runtime message (a trap) with the file', async () => {
    const s = setup('join');
    writeFileSync(join(s.vol, 'termination-log'), 'bye');
    expect(await terminationMessage(c(), { exitCode: 134, message: 'RuntimeError: unreachable' }, s.mounts, s.logPath)).toBe('RuntimeError: unreachable: bye');
  });

  it('FallbackToLogsOnError: the last 80 log lines (at most 2048 bytes) after a failure, nothing after success', async () => {
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i}`);
    const s = setup('fallback', lines);
    const spec = c({ terminationMessagePolicy: 'FallbackToLogsOnError' });
    expect(await terminationMessage(spec, { exitCode: 2 }, s.mounts, s.logPath)).toBe(`${lines.slice(20).join('\n')}\n`);
    expect(await terminationMessage(spec, { exitCode: 0 }, s.mounts, s.logPath)).toBeUndefined();
    expect(await terminationMessage(c(), { exitCode: 2 }, s.mounts, s.logPath)).toBeUndefined();
    const big = setup(
      'big',
      Array.from({ length: 80 }, () => 'y'.repeat(100)),
    );
    expect(await terminationMessage(spec, { exitCode: 2 }, big.mounts, big.logPath)).toHaveLength(2048);
    writeFileSync(join(s.vol, 'termination-log'), 'from file');
    expect(await terminationMessage(spec, { exitCode: 2 }, s.mounts, s.logPath)).toBe('from file');
  });

  it('never follows a symlink out of the mount, and a path outside every mount gives nothing', async () => {
    const s = setup('escape');
    writeFileSync(join(root, 'host-secret'), 'TOP SECRET');
    symlinkSync(join(root, 'host-secret'), join(s.vol, 'termination-log'));
    const msg = await terminationMessage(c(), { exitCode: 1 }, s.mounts, s.logPath);
    expect(msg).toMatch(/^Error on reading termination log \/dev\/termination-log: /);
    expect(msg).not.toContain('TOP SECRET');
    expect(await terminationMessage(c({ terminationMessagePath: '/elsewhere/log' }), { exitCode: 1, message: 'm' }, s.mounts, s.logPath)).toBe('m');
  });
});

describe('terminationMessage after the container renamed things (21.2)', () => {
  function subPathSetup(name: string) {
    const vol = join(root, name, 'vol');
    mkdirSync(join(vol, 'd'), { recursive: true });
    mkdirSync(join(root, name, 'host'));
    writeFileSync(join(root, name, 'host', 'termination-log'), 'HOST FILE');
    writeFileSync(join(vol, 'd', 'termination-log'), 'volume message');
    writeFileSync(join(vol, 'tl'), 'file subPath message');
    symlinkSync(join(root, name, 'host'), join(vol, 'dir-link'));
    symlinkSync(join(root, name, 'host', 'termination-log'), join(vol, 'file-link'));
    const logPath = join(root, name, '0.log');
    writeFileSync(logPath, '');
    return { vol, logPath };
  }

  it('a subPath directory at /dev replaced by a symlink out of the volume is refused', async () => {
    const { vol, logPath } = subPathSetup('sub-dir');
    const mounts: Mount[] = [
      { name: 'hp', containerPath: '/hp', hostPath: vol, readOnly: false },
      { name: 'hp', containerPath: '/dev', hostPath: join(vol, 'd'), readOnly: false },
    ];
    expect(await terminationMessage(c(), { exitCode: 0 }, mounts, logPath)).toBe('volume message');
    renameSync(join(vol, 'd'), join(vol, 'away'));
    renameSync(join(vol, 'dir-link'), join(vol, 'd'));
    const msg = await terminationMessage(c(), { exitCode: 0 }, mounts, logPath);
    expect(msg).toBe("Error on reading termination log /dev/termination-log: path escapes its root: hp: the volume's path was replaced by a symlink");
  });

  it('a file subPath at /dev/termination-log replaced by a symlink is refused', async () => {
    const { vol, logPath } = subPathSetup('sub-file');
    const mounts: Mount[] = [
      { name: 'hp', containerPath: '/hp', hostPath: vol, readOnly: false },
      { name: 'hp', containerPath: '/dev/termination-log', hostPath: join(vol, 'tl'), readOnly: false },
    ];
    expect(await terminationMessage(c(), { exitCode: 0 }, mounts, logPath)).toBe('file subPath message');
    renameSync(join(vol, 'tl'), join(vol, 'away'));
    renameSync(join(vol, 'file-link'), join(vol, 'tl'));
    const msg = await terminationMessage(c(), { exitCode: 0 }, mounts, logPath);
    expect(msg).toBe("Error on reading termination log /dev/termination-log: path escapes its root: hp: the volume's path was replaced by a symlink");
  });

  it('a FIFO at the path does not block the read', async () => {
    const s = setup('fifo');
    execFileSync('mkfifo', [join(s.vol, 'termination-log')]);
    expect(await terminationMessage(c(), { exitCode: 0 }, s.mounts, s.logPath)).toBe(
      'Error on reading termination log /dev/termination-log: not a regular file',
    );
  });
});

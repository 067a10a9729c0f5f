import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Mount } from '@nodelet/plugin-api/v1';
import { WasiProvider } from '../src/index.ts';
import { FakeImages, logText, podContext, providerContext, pulledFixture, scratch, spec } from './helpers.ts';

let provider: WasiProvider;
const tmp = scratch();
let ro: string;
let rw: string;
let mounts: Mount[];

beforeAll(async () => {
  provider = new WasiProvider();
  await provider.init(providerContext(new FakeImages()));
});
afterAll(async () => {
  await provider.shutdown();
  tmp.cleanup();
});
beforeEach(() => {
  const base = join(tmp.dir, `vols-${Math.random().toString(36).slice(2)}`);
  ro = join(base, 'ro');
  rw = join(base, 'rw');
  mkdirSync(join(ro, 'sub'), { recursive: true });
  mkdirSync(rw, { recursive: true });
  writeFileSync(join(ro, 'existing'), 'original');
  writeFileSync(join(rw, 'existing'), 'rw original');
  mounts = [
    { name: 'config', hostPath: ro, containerPath: '/ro', readOnly: true },
    { name: 'data', hostPath: rw, containerPath: '/rw', readOnly: false },
  ];
});

async function run(fixture: string, args: string[], m: Mount[] = mounts) {
  const s = spec(await pulledFixture(fixture), tmp.dir, args, { mounts: m });
  const c = await provider.startContainer(s, podContext());
  const exit = await c.exit;
  return { exit, out: logText(s.logPath) };
}

function snapshot(dir: string): string {
  return readdirSync(dir, { recursive: true })
    .map(String)
    .sort()
    .map((f) => {
      const st = statSync(join(dir, f));
      return `${f}:${st.size}:${st.mtimeMs}`;
    })
    .join('\n');
}

describe('read-write mounts', () => {
  it('are listed, readable and writable', async () => {
    const ls = await run('hello', ['--ls=/ro', '--ls=/rw']);
    expect(ls.out).toContain('file /ro/existing\nfile /ro/sub\n');
    expect(ls.out).toContain('file /rw/existing\n');
    const w = await run('write-file', ['/rw/new.txt', 'hello volume']);
    expect(w).toMatchObject({ exit: { exitCode: 0 }, out: 'wrote /rw/new.txt\n' });
    expect(readFileSync(join(rw, 'new.txt'), 'utf8')).toBe('hello volume');
    const r = await run('read-file', ['/rw/new.txt', '/ro/existing']);
    expect(r.out).toBe('content /rw/new.txt: hello volume\ncontent /ro/existing: original\n');
  });
  it.each([
    ['mkdir', ['/rw/d'], () => statSync(join(rw, 'd')).isDirectory()],
    ['unlink', ['/rw/existing'], () => !existsSync(join(rw, 'existing'))],
    ['open-append', ['/rw/existing'], () => readFileSync(join(rw, 'existing'), 'utf8') === 'rw originalx'],
  ] as const)('allow %s', async (op, args, check) => {
    const r = await run('fs-ops', [op, ...args]);
    expect(r.out).toBe(`ok ${op}\n`);
    expect(check()).toBe(true);
  });
  it('expose only the mounts: other host paths do not exist for the module', async () => {
    const r = await run('read-file', ['/etc/hostname', `${rw}/existing`]);
    expect(r.exit.exitCode).toBe(1);
    expect(r.out).toMatch(/^cannot open \/etc\/hostname: .*\ncannot open \/.*\/existing: /);
  });
});

describe('read-only mounts', () => {
  it('can be read', async () => {
    const r = await run('fs-ops', ['open-read', '/ro/existing']);
    expect(r.out).toBe('read: original\nok open-read\n');
  });
  it.each([
    ['open-write', '/ro/new'],
    ['open-write', '/ro/existing'],
    ['open-append', '/ro/existing'],
    ['write-rdwr', '/ro/existing'],
    ['truncate', '/ro/existing'],
    ['mkdir', '/ro/newdir'],
    ['rmdir', '/ro/sub'],
    ['unlink', '/ro/existing'],
    ['rename', '/ro/existing', '/ro/renamed'],
    ['rename', '/ro/existing', '/rw/moved'],
    ['rename', '/rw/existing', '/ro/moved-in'],
    ['symlink', 'existing', '/ro/link'],
    ['link', '/ro/existing', '/rw/hardlink'],
    ['link', '/rw/existing', '/ro/hardlink'],
    ['utimes', '/ro/existing'],
  ])('refuse %s %s %s', async (op, ...args) => {
    const before = snapshot(ro);
    const r = await run('fs-ops', [op, ...args]);
    expect(r.exit.exitCode).toBe(1);
    expect(r.out).toMatch(new RegExp(`^fail ${op}: (Read-only file system|Cross-device link)\\n$`));
    expect(snapshot(ro)).toBe(before);
    expect(readFileSync(join(ro, 'existing'), 'utf8')).toBe('original');
    expect(existsSync(join(rw, 'moved'))).toBe(false);
    expect(existsSync(join(rw, 'hardlink'))).toBe(false);
  });
  it('answer EROFS, not a generic error, for a plain write', async () => {
    const r = await run('write-file', ['/ro/existing', 'changed']);
    expect(r.out).toBe('cannot write /ro/existing: Read-only file system\n');
  });
});

describe('paths cannot escape their mount', () => {
  let secret: string;
  beforeEach(() => {
    secret = join(rw, '..', 'secret.txt');
    writeFileSync(secret, 'TOP SECRET');
    symlinkSync(secret, join(rw, 'abs-link'));
    symlinkSync('../secret.txt', join(rw, 'rel-link'));
    symlinkSync('/etc', join(rw, 'etc-link'));
    symlinkSync('..', join(rw, 'up-link'));
  });
  it.each([
    ['an absolute symlink to a host file', '/rw/abs-link'],
    ['a relative ../ symlink', '/rw/rel-link'],
    ['an absolute symlink to a host directory', '/rw/etc-link/hostname'],
    ['a symlink to the parent directory', '/rw/up-link/secret.txt'],
    ['a ../ path', '/rw/../secret.txt'],
  ])('refuses %s', async (_what, path) => {
    const r = await run('escape', [path]);
    expect(r.exit.exitCode).toBe(1);
    expect(r.out).toMatch(new RegExp(`^cannot open ${path.replace(/[.]/g, '\\.')}: `));
    expect(r.out).not.toContain('TOP SECRET');
  });
  it('refuses a symlink the module creates itself', async () => {
    const r = await run('escape', ['/rw/mine', '../secret.txt', '/rw/mine']);
    expect(r.out).not.toContain('TOP SECRET');
    expect(r.out).toMatch(/cannot open \/rw\/mine: /);
    const r2 = await run('escape', ['/rw/mine2', secret, '/rw/mine2']);
    expect(r2.out).not.toContain('TOP SECRET');
    expect(r2.exit.exitCode).toBe(1);
  });
  it('refuses a directory symlink the module creates itself', async () => {
    // uvwasi already refuses to create symlinks that point out; either way nothing is read.
    for (const target of ['/etc', '..']) {
      const r = await run('escape', ['/rw/mydir/hostname', target, '/rw/mydir']);
      expect(r.out).toMatch(/^cannot symlink \/rw\/mydir: .*\ncannot open \/rw\/mydir\/hostname: /);
      expect(r.exit.exitCode).toBe(1);
    }
  });
  it('refuses to create or write files through an escaping symlink', async () => {
    const outside = join(rw, '..');
    const before = readdirSync(outside).sort();
    for (const path of ['/rw/up-link/created.txt', '/rw/up-link/secret.txt']) {
      const r = await run('write-file', [path, 'pwned']);
      expect(r.out).toMatch(/^cannot write /);
    }
    const r = await run('fs-ops', ['mkdir', '/rw/up-link/newdir']);
    expect(r.out).toMatch(/^fail mkdir: /);
    expect(readdirSync(outside).sort()).toEqual(before);
    expect(readFileSync(secret, 'utf8')).toBe('TOP SECRET');
  });
  it('follows a symlink that stays inside the mount', async () => {
    symlinkSync('existing', join(rw, 'inside-link'));
    const r = await run('escape', ['/rw/inside-link']);
    expect(r.out).toBe('read /rw/inside-link: rw original\n');
  });
});

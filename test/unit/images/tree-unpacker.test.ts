// The image volume unpacker on its own: layers applied in order, whiteouts, links, read-only
// result, and every escape (`..`, through a symlink, a hard link out) refused with a clear error.
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pack, type Header } from 'tar-stream';
import { afterEach, describe, expect, it } from 'vitest';
import { isNodeletError } from '../../../core/errors/catalogue.ts';
import { cleanEntryName, confinedLinkTarget } from '../../../core/images/tree-paths.ts';
import { TreeUnpacker } from '../../../core/images/tree-unpacker.ts';
import { removeUnpackedTree } from '../../../core/images/tree-store.ts';

type Entry = Partial<Header> & { name: string; body?: string };

/** A tar archive of `entries`, in order (any name, type and link GNU tar would refuse to write). */
async function tar(entries: Entry[]): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  const done = (async () => {
    for await (const c of p) chunks.push(c as Buffer);
  })();
  for (const { body, ...h } of entries) {
    await new Promise<void>((res, rej) => p.entry({ type: 'file', mode: 0o644, ...h }, body ?? '', (e) => (e ? rej(e) : res())));
  }
  p.finalize();
  await done;
  return Buffer.concat(chunks);
}

const roots: string[] = [];
afterEach(async () => {
  for (const r of roots.splice(0)) {
    await removeUnpackedTree(r, dirname(r)).catch(() => undefined);
    rmSync(r, { recursive: true, force: true });
  }
});

/** A fresh root (in a parent dir of its own, so an escape would land in the parent, which the tests check). */
function root(): string {
  const parent = mkdtempSync(join(tmpdir(), 'nodelet-unpack-'));
  roots.push(parent);
  const r = join(parent, 'root');
  mkdirSync(r);
  return r;
}

async function apply(r: string, ...layers: Entry[][]): Promise<TreeUnpacker> {
  const u = new TreeUnpacker(r);
  for (const [i, l] of layers.entries()) await u.applyLayer(Readable.from([await tar(l)]), `sha256:layer${i}`);
  return u;
}

const failure = async (p: Promise<unknown>) => {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(isNodeletError(e)).toBe(true);
  return e as Error & { code: string };
};

describe('cleanEntryName and confinedLinkTarget', () => {
  it('cleans names like a layer extraction and refuses climbing above the root', () => {
    expect(cleanEntryName('./a//b/')).toBe('a/b');
    expect(cleanEntryName('/etc/passwd')).toBe('etc/passwd');
    expect(cleanEntryName('a/x/../b')).toBe('a/b');
    expect(cleanEntryName('a/../../b')).toBeUndefined();
  });
  it('reads targets with the volume as the root and writes them relative to the link', () => {
    expect(confinedLinkTarget('bin/sh', '/bin/busybox')).toBe('busybox');
    expect(confinedLinkTarget('etc/os-release', '../usr/lib/os-release')).toBe('../usr/lib/os-release');
    expect(confinedLinkTarget('a/b/l', '/etc/passwd')).toBe('../../etc/passwd');
    expect(confinedLinkTarget('l', '../../../etc/passwd')).toBe('etc/passwd');
    expect(confinedLinkTarget('a/l', '../../..')).toBe('..');
    expect(confinedLinkTarget('l', '/')).toBe('.');
  });
});

describe('TreeUnpacker', () => {
  it('applies layers in order and makes the tree read-only, counting hard links once', async () => {
    const r = root();
    const u = await apply(
      r,
      [
        { name: 'etc/', type: 'directory', mode: 0o755 },
        { name: 'etc/os-release', body: 'NAME=lower' },
        { name: 'bin/tool', body: 'x', mode: 0o4755 },
        { name: 'data/keep.txt', body: 'keep' },
      ],
      [
        { name: 'etc/os-release', body: 'NAME=upper' },
        { name: 'data/copy.txt', type: 'link', linkname: 'data/keep.txt' },
      ],
    );
    const size = await u.finish();
    expect(readFileSync(join(r, 'etc/os-release'), 'utf8')).toBe('NAME=upper');
    expect(readFileSync(join(r, 'data/copy.txt'), 'utf8')).toBe('keep');
    expect(statSync(join(r, 'data/copy.txt')).ino).toBe(statSync(join(r, 'data/keep.txt')).ino);
    expect(size).toBe('NAME=upper'.length + 1 + 4);
    expect(statSync(join(r, 'etc')).mode & 0o7777).toBe(0o555);
    expect(statSync(join(r, 'etc/os-release')).mode & 0o7777).toBe(0o444);
    expect(statSync(join(r, 'bin/tool')).mode & 0o7777).toBe(0o555); // set-uid dropped
  });

  it('honours whiteouts and opaque directories for lower layers only', async () => {
    const r = root();
    await apply(
      r,
      [
        { name: 'gone.txt', body: '1' },
        { name: 'dir/a', body: 'a' },
        { name: 'dir/sub/b', body: 'b' },
        { name: 'opq/old', body: 'old' },
        { name: 'opq/kept-dir/old', body: 'old' },
      ],
      [
        { name: '.wh.gone.txt', body: '' },
        { name: 'dir/.wh.sub', body: '' },
        { name: 'opq/kept-dir/new', body: 'new' },
        { name: 'opq/.wh..wh..opq', body: '' },
        { name: 'opq/fresh', body: 'fresh' },
        { name: 'nothing/.wh.absent', body: '' },
      ],
    );
    expect(existsSync(join(r, 'gone.txt'))).toBe(false);
    expect(existsSync(join(r, 'dir/a'))).toBe(true);
    expect(existsSync(join(r, 'dir/sub'))).toBe(false);
    expect(existsSync(join(r, 'opq/old'))).toBe(false);
    expect(existsSync(join(r, 'opq/kept-dir/old'))).toBe(false);
    expect(readFileSync(join(r, 'opq/kept-dir/new'), 'utf8')).toBe('new');
    expect(readFileSync(join(r, 'opq/fresh'), 'utf8')).toBe('fresh');
    expect(existsSync(join(r, 'nothing'))).toBe(false);
    expect(existsSync(join(r, '.wh.gone.txt'))).toBe(false);
  });

  it('replaces a directory by a file and a file by a directory', async () => {
    const r = root();
    await apply(
      r,
      [
        { name: 'x/inner', body: 'i' },
        { name: 'y', body: 'file' },
      ],
      [
        { name: 'x', body: 'now a file' },
        { name: 'y/', type: 'directory' },
      ],
    );
    expect(readFileSync(join(r, 'x'), 'utf8')).toBe('now a file');
    expect(lstatSync(join(r, 'y')).isDirectory()).toBe(true);
  });

  it('keeps symlinks, confined to the volume (absolute targets are read from its root)', async () => {
    const r = root();
    writeFileSync(join(dirname(r), 'outside'), 'host file');
    await apply(r, [
      { name: 'bin/busybox', body: 'bb' },
      { name: 'bin/sh', type: 'symlink', linkname: '/bin/busybox' },
      { name: 'escape', type: 'symlink', linkname: '../outside' },
      { name: 'deep/l', type: 'symlink', linkname: '../../../../outside' },
    ]);
    expect(readlinkSync(join(r, 'bin/sh'))).toBe('busybox');
    expect(readFileSync(join(r, 'bin/sh'), 'utf8')).toBe('bb');
    expect(readlinkSync(join(r, 'escape'))).toBe('outside');
    expect(readlinkSync(join(r, 'deep/l'))).toBe('../outside');
    // Followed on the host, neither reaches the file beside the root.
    for (const l of ['escape', 'deep/l']) expect(existsSync(join(r, l))).toBe(false);
  });

  it('refuses an entry climbing out with ".." and writes nothing outside', async () => {
    const r = root();
    const e = await failure(
      apply(r, [
        { name: 'ok', body: 'ok' },
        { name: '../evil', body: 'pwned' },
      ]),
    );
    expect(e.code).toBe('NDL_PATH_ESCAPE');
    expect(e.message).toBe('path escapes its root: tar entry "../evil" of layer sha256:layer0 climbs out of the volume root with ".."');
    expect(existsSync(join(dirname(r), 'evil'))).toBe(false);
  });

  it('refuses to write through a symlink of the image, even one made in an earlier layer', async () => {
    const r = root();
    const e = await failure(apply(r, [{ name: 'link', type: 'symlink', linkname: '..' }], [{ name: 'link/evil', body: 'pwned' }]));
    expect(e.code).toBe('NDL_PATH_ESCAPE');
    expect(e.message).toContain('tar entry "link/evil" of layer sha256:layer1 goes through "link", a symlink');
    expect(existsSync(join(dirname(r), 'evil'))).toBe(false);
  });

  it('refuses a hard link naming a file outside the volume or through a symlink', async () => {
    const r = root();
    writeFileSync(join(dirname(r), 'secret'), 'secret');
    const out = await failure(apply(r, [{ name: 'h', type: 'link', linkname: '../secret' }]));
    expect(out.code).toBe('NDL_PATH_ESCAPE');
    expect(out.message).toContain('hard link "h" of layer sha256:layer0 names "../secret", outside the volume root');
    const r2 = root();
    writeFileSync(join(dirname(r2), 'secret'), 'secret');
    const through = await failure(
      apply(r2, [
        { name: 'up', type: 'symlink', linkname: '/' },
        { name: 'h', type: 'link', linkname: 'up/../secret' },
      ]),
    );
    // `up/../secret` cleans to `secret`, which is not in the image: nothing outside is linked.
    expect(through.message).toContain('names "up/../secret", which is not in the image');
    const r3 = root();
    const via = await failure(
      apply(r3, [
        { name: 'up', type: 'symlink', linkname: '/' },
        { name: 'h', type: 'link', linkname: 'up/x' },
      ]),
    );
    expect(via.code).toBe('NDL_PATH_ESCAPE');
    expect(via.message).toContain('names "up/x", through "up", a symlink');
  });

  it('makes a hard link to a symlink a symlink to the same place', async () => {
    const r = root();
    await apply(r, [
      { name: 'a/b/target', body: 't' },
      { name: 'a/b/l', type: 'symlink', linkname: 'target' },
      { name: 'h', type: 'link', linkname: 'a/b/l' },
    ]);
    expect(readlinkSync(join(r, 'h'))).toBe('a/b/target');
    expect(realpathSync(join(r, 'h'))).toBe(resolve(realpathSync(r), 'a/b/target'));
  });

  it('fails clearly on a truncated archive and on one that is not a tar', async () => {
    const r = root();
    const whole = await tar([{ name: 'big', body: 'x'.repeat(4000) }]);
    const truncated = await failure(new TreeUnpacker(r).applyLayer(Readable.from([whole.subarray(0, 1500)]), 'sha256:t'));
    expect(truncated.message).toBe('unsupported image format: layer sha256:t is a truncated tar archive');
    const junk = await failure(new TreeUnpacker(root()).applyLayer(Readable.from([Buffer.alloc(1024, 7)]), 'sha256:j'));
    expect(junk.message).toContain('layer sha256:j is not a tar archive');
  });

  it('stops at its limits instead of filling the disk', async () => {
    const r = root();
    const u = new TreeUnpacker(r, { maxBytes: 100, maxEntries: 1000 });
    const e = await failure(
      u.applyLayer(
        Readable.from([
          await tar([
            { name: 'a', body: 'x'.repeat(60) },
            { name: 'b', body: 'x'.repeat(60) },
          ]),
        ]),
        'sha256:l',
      ),
    );
    expect(e.message).toBe("unsupported image format: the image's content exceeds the 100 bytes the image filesystem can take");
    const many = new TreeUnpacker(root(), { maxBytes: 1 << 20, maxEntries: 2 });
    const m = await failure(many.applyLayer(Readable.from([await tar([{ name: 'a' }, { name: 'b' }, { name: 'c' }])]), 'sha256:m'));
    expect(m.message).toContain('more than the 2 entries');
  });

  it("writes an artifact's layer at its title, refusing a title that leaves the volume or a duplicate", async () => {
    const r = root();
    const u = new TreeUnpacker(r);
    await u.addFile(Readable.from([Buffer.from('plugin')]), '/plugins/a.wasm', 6, 'sha256:a');
    expect(readFileSync(join(r, 'plugins/a.wasm'), 'utf8')).toBe('plugin');
    const out = await failure(u.addFile(Readable.from([Buffer.from('x')]), '../../etc/x', 1, 'sha256:b'));
    expect(out.code).toBe('NDL_PATH_ESCAPE');
    expect(out.message).toBe('path escapes its root: the file name "../../etc/x" of layer sha256:b leaves the volume root');
    const dup = await failure(u.addFile(Readable.from([Buffer.from('x')]), 'plugins/a.wasm', 1, 'sha256:c'));
    expect(dup.message).toBe('unsupported image format: two layers are named "plugins/a.wasm"');
  });

  it('removes a finished, read-only tree', async () => {
    const r = root();
    const u = await apply(r, [{ name: 'd/e/f', body: 'f' }]);
    await u.finish();
    const { chmodSync } = await import('node:fs');
    chmodSync(r, 0o555);
    await removeUnpackedTree(r, dirname(r));
    expect(existsSync(r)).toBe(false);
  });
});

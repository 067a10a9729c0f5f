// Compat OCI images (module named by the config's entrypoint, inside tar layers made by GNU tar)
// pulled from a real docker-registry, and the tar reader on its own.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { readFile, rm, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isProviderError, type ImageRequest } from '@nodelet/plugin-api/v1';
import { isNodeletError } from '../../../core/errors/catalogue.ts';
import { OciImageService } from '../../../core/images/image-service.ts';
import { WASM_LAYER_TYPES } from '../../../core/images/manifest.ts';
import { TarFileFinder } from '../../../core/images/tar-reader.ts';
import { makeTar, pushCompatImage, pushRawCompatImage, rawTarEntry } from '../../harness/compat-image.ts';
import { sha256, tinyModule } from '../../harness/oci-push.ts';
import { startRegistry, type TestRegistry } from '../../harness/registry.ts';

let reg: TestRegistry;
const roots: string[] = [];
beforeAll(async () => {
  reg = await startRegistry();
});
afterAll(async () => {
  await reg?.stop();
  await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
});

async function service(): Promise<OciImageService> {
  const root = await mkdtemp(join(tmpdir(), 'nodelet-compat-'));
  roots.push(root);
  return OciImageService.open({ rootDir: root });
}
const req: ImageRequest = { pullPolicy: 'IfNotPresent', credentials: [], acceptLayerTypes: WASM_LAYER_TYPES };
const failure = async (p: Promise<unknown>) => {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(isProviderError(e)).toBe(true);
  return e as Error & { reason: string; cause?: unknown };
};

describe('TarFileFinder', () => {
  const spool = mkdtempSync(join(tmpdir(), 'nodelet-spool-'));
  afterAll(() => rmSync(spool, { recursive: true, force: true }));
  /** Feeds `tar` in `chunk`-byte pieces; a found file is read back from its spool file (then removed). */
  const find = async (tar: Buffer, name: string, chunk = 7) => {
    const f = new TarFileFinder(name, 1 << 20, spool);
    for (let i = 0; i < tar.length; i += chunk) await f.push(tar.subarray(i, i + chunk));
    const r = await f.end();
    if (!r.found) return r;
    const bytes = readFileSync(r.path);
    rmSync(r.path);
    expect(r).toMatchObject({ size: bytes.length, digest: sha256(bytes) });
    return { found: true, bytes };
  };

  it.each(['pax', 'ustar', 'gnu'] as const)('finds a file in a %s archive fed in odd-sized chunks', async (format) => {
    const tar = makeTar({ 'a.txt': 'aaa', 'bin/app.wasm': 'MODULE', 'z.bin': Buffer.alloc(1500, 1) }, format);
    const r = await find(tar, '/bin/app.wasm');
    expect(r).toEqual({ found: true, bytes: Buffer.from('MODULE') });
  });

  it('follows pax / GNU long names beyond 100 characters', async () => {
    const long = `${'d'.repeat(60)}/${'e'.repeat(60)}/${'m'.repeat(80)}.wasm`;
    for (const format of ['pax', 'gnu'] as const) {
      expect(await find(makeTar({ [long]: 'LONG' }, format), `/${long}`, 513)).toEqual({ found: true, bytes: Buffer.from('LONG') });
    }
  });

  it('says what is wrong: missing file, symlink, truncated archive, not a tar', async () => {
    const tar = makeTar({ 'x.wasm': 'x', 'link.wasm': { symlink: '/etc/passwd' } });
    expect(await find(tar, 'nope.wasm')).toEqual({ found: false, reason: '"nope.wasm" is not in the layer' });
    expect(await find(tar, 'link.wasm')).toEqual({ found: false, reason: '"link.wasm" is a symlink to "/etc/passwd", not a regular file' });
    expect(await find(tar.subarray(0, 1024 + 100), 'x.wasm')).toMatchObject({ found: false, reason: expect.stringContaining('the tar archive is truncated') });
    await expect(find(Buffer.alloc(1024, 0x41), 'x.wasm')).rejects.toThrow(/not a tar archive/);
  });

  it('reads a GNU base-256 size field and refuses one that is not a safe integer', async () => {
    const mod = tinyModule('b256');
    expect(await find(Buffer.concat([rawTarEntry('app.wasm', mod, { base256: BigInt(mod.length) }), Buffer.alloc(1024)]), 'app.wasm')).toEqual({
      found: true,
      bytes: mod,
    });
    await expect(find(Buffer.concat([rawTarEntry('app.wasm', mod, { base256: 1n << 70n }), Buffer.alloc(1024)]), 'app.wasm')).rejects.toThrow(
      'tar entry "app.wasm" declares an invalid size',
    );
  });

  it('refuses names climbing out of the root and files reached through a link; caps long-name headers', async () => {
    const mod = tinyModule('x');
    await expect(find(Buffer.concat([rawTarEntry('a/../../app.wasm', mod), Buffer.alloc(1024)]), 'app.wasm')).rejects.toThrow(
      /tar entry "a\/\.\.\/\.\.\/app\.wasm" climbs out of the layer root/,
    );
    expect(await find(Buffer.concat([rawTarEntry('x/../app.wasm', mod), Buffer.alloc(1024)]), 'app.wasm')).toEqual({ found: true, bytes: mod });
    const through = Buffer.concat([rawTarEntry('bin', undefined, { type: '2', linkName: '/etc' }), rawTarEntry('bin/app.wasm', mod), Buffer.alloc(1024)]);
    expect(await find(through, '/bin/app.wasm')).toEqual({ found: false, reason: '"bin/app.wasm" goes through "bin", a symlink to "/etc"' });
    const longName = rawTarEntry('././@LongLink', Buffer.alloc(5 << 20, 0x61), { type: 'L' });
    await expect(find(Buffer.concat([longName, rawTarEntry('x', mod), Buffer.alloc(1024)]), 'app.wasm', 65536)).rejects.toThrow(
      'a tar long-name or pax header exceeds 4 MiB',
    );
  });

  it('reports a wanted file or another entry declaring 600 MiB precisely, without reading it', async () => {
    const big = 600 << 20;
    await expect(find(Buffer.concat([rawTarEntry('app.wasm', Buffer.alloc(4096), { size: big })]), 'app.wasm', 4096)).rejects.toThrow(
      `"app.wasm" is ${big} bytes, more than the ${1 << 20} allowed`,
    );
    expect(await find(Buffer.concat([rawTarEntry('huge.bin', Buffer.alloc(1 << 20), { size: big })]), 'app.wasm', 65536)).toEqual({
      found: false,
      reason: `the tar archive is truncated (entry "huge.bin" declares ${big} bytes)`,
    });
  });

  it('leaves no spooled file behind when the archive fails or the file is replaced by a link', async () => {
    const mod = tinyModule('spool');
    await expect(find(Buffer.concat([rawTarEntry('app.wasm', mod), rawTarEntry('x', mod, { badChecksum: true })]), 'app.wasm')).rejects.toThrow(
      /bad header checksum/,
    );
    expect(
      await find(Buffer.concat([rawTarEntry('app.wasm', Buffer.alloc(8192, 1)), rawTarEntry('pad', Buffer.alloc(100), { size: 1 << 20 })]), 'app.wasm', 512),
    ).toMatchObject({ found: false, reason: expect.stringContaining('truncated') });
    expect(
      await find(
        Buffer.concat([rawTarEntry('app.wasm', mod), rawTarEntry('app.wasm', undefined, { type: '2', linkName: '/etc/passwd' }), Buffer.alloc(1024)]),
        'app.wasm',
      ),
    ).toEqual({ found: false, reason: '"app.wasm" is a symlink to "/etc/passwd", not a regular file' });
    expect(readdirSync(spool)).toEqual([]);
  });

  it('reports a whiteout of the wanted file', async () => {
    const r = await find(makeTar({ 'bin/.wh.app.wasm': '' }), '/bin/app.wasm');
    expect(r).toMatchObject({ found: false, deleted: true });
  });
});

describe('pulling compat images', () => {
  it('extracts the entrypoint module from a gzip layer and stores it under its own digest', async () => {
    const mod = tinyModule('compat-gzip');
    const pushed = await pushCompatImage(reg.host, 'compat/gz', 'v1', mod, { extraFiles: { 'etc/motd': 'hi' } });
    const svc = await service();
    const img = await svc.pull(`${reg.host}/compat/gz:v1`, req);
    expect(img.digest).toBe(pushed.digest);
    expect(img.imageID).toBe(`${reg.host}/compat/gz@${pushed.digest}`);
    expect(img.path.endsWith(sha256(mod).slice(7))).toBe(true);
    expect(await readFile(img.path)).toEqual(mod);
    expect(img.size).toBe(mod.length);
    expect(img.cached).toBe(false);
    expect((await svc.pull(`${reg.host}/compat/gz:v1`, req)).cached).toBe(true);
  });

  it('reads an uncompressed layer and finds the module in a lower layer, the upper one winning', async () => {
    const svc = await service();
    await pushCompatImage(reg.host, 'compat/tar', 'v1', tinyModule('upper'), {
      gzip: false,
      entrypoint: '/bin/m.wasm',
      lowerLayers: [{ 'bin/m.wasm': tinyModule('lower') }],
    });
    expect(await readFile((await svc.pull(`${reg.host}/compat/tar:v1`, req)).path)).toEqual(tinyModule('upper'));
    await pushCompatImage(reg.host, 'compat/lower', 'v1', tinyModule('unused'), {
      entrypoint: '/top.wasm',
      imageConfig: { Entrypoint: ['/bin/lower.wasm'] },
      lowerLayers: [{ 'bin/lower.wasm': tinyModule('from-lower') }],
    });
    expect(await readFile((await svc.pull(`${reg.host}/compat/lower:v1`, req)).path)).toEqual(tinyModule('from-lower'));
  });

  it('uses config.Cmd[0] when there is no Entrypoint', async () => {
    await pushCompatImage(reg.host, 'compat/cmd', 'v1', tinyModule('cmd'), { entrypoint: '/cmd.wasm', imageConfig: { Cmd: ['/cmd.wasm', 'arg'] } });
    expect(await readFile((await (await service()).pull(`${reg.host}/compat/cmd:v1`, req)).path)).toEqual(tinyModule('cmd'));
  });

  it('fails with ErrImagePull naming the entrypoint when it is missing, not Wasm, or the config has none', async () => {
    const svc = await service();
    await pushCompatImage(reg.host, 'compat/bad', 'missing', tinyModule(), { imageConfig: { Entrypoint: ['/other.wasm'] } });
    let e = await failure(svc.pull(`${reg.host}/compat/bad:missing`, req));
    expect(e.reason).toBe('ErrImagePull');
    expect(e.message).toContain('compat image: the module named by the entrypoint cannot be extracted: "/other.wasm" is not in any layer');
    await pushCompatImage(reg.host, 'compat/bad', 'notwasm', Buffer.from('#!/bin/sh\necho hi\n'));
    e = await failure(svc.pull(`${reg.host}/compat/bad:notwasm`, req));
    expect(e.message).toContain('the entrypoint "/app.wasm" of the image is not a WebAssembly module');
    await pushCompatImage(reg.host, 'compat/bad', 'noentry', tinyModule(), { imageConfig: { Env: ['A=b'] } });
    e = await failure(svc.pull(`${reg.host}/compat/bad:noentry`, req));
    expect(e.message).toContain('image config has no entrypoint');
    expect(isNodeletError(e.cause, 'NDL_IMAGE_FORMAT')).toBe(true);
  });

  it('ends hostile layers with a precise ErrImagePull instead of hanging (bad checksum, 600 MiB entry, base-256 size)', async () => {
    const svc = await service();
    const filler = Buffer.alloc(4 << 20, 0x5a);
    const cases: [string, Buffer, string][] = [
      ['checksum', Buffer.concat([rawTarEntry('app.wasm', tinyModule(), { badChecksum: true }), filler]), 'layer is not a tar archive (bad header checksum)'],
      [
        'huge',
        Buffer.concat([rawTarEntry('pad.bin', filler, { size: 600 << 20 })]),
        `the tar archive is truncated (entry "pad.bin" declares ${600 << 20} bytes)`,
      ],
      ['b256', Buffer.concat([rawTarEntry('app.wasm', filler, { base256: 1n << 72n })]), 'tar entry "app.wasm" declares an invalid size'],
    ];
    for (const [tag, tar, message] of cases) {
      for (const gzip of [false, true]) {
        await pushRawCompatImage(reg.host, 'compat/hostile', `${tag}-${gzip}`, tar, { gzip });
        const e = await failure(svc.pull(`${reg.host}/compat/hostile:${tag}-${gzip}`, req));
        expect(e.reason).toBe('ErrImagePull');
        expect(e.message).toContain(message);
      }
    }
    expect(svc.list()).toEqual([]);
  });

  it('spools a large module (64 MiB from a small gzip layer) to disk and leaves no scratch file', async () => {
    const root = await mkdtemp(join(tmpdir(), 'nodelet-compat-'));
    roots.push(root);
    const svc = await OciImageService.open({ rootDir: root });
    const big = Buffer.concat([tinyModule('big'), Buffer.alloc(64 << 20)]);
    await pushCompatImage(reg.host, 'compat/big', 'v1', big);
    const img = await svc.pull(`${reg.host}/compat/big:v1`, req);
    expect(img.size).toBe(big.length);
    expect(img.path.endsWith(sha256(big).slice(7))).toBe(true);
    expect(readdirSync(join(root, 'images', 'tmp'))).toEqual([]);
  });

  it('rejects a tampered layer as a digest mismatch and stores nothing', async () => {
    const mod = tinyModule('tampered-compat');
    const pushed = await pushCompatImage(reg.host, 'compat/tamper', 'v1', mod);
    const { writeFile } = await import('node:fs/promises');
    await writeFile(reg.blobDataPath(pushed.layers[0]!.digest), Buffer.alloc(pushed.layers[0]!.size, 7));
    const svc = await service();
    const e = await failure(svc.pull(`${reg.host}/compat/tamper:v1`, req));
    expect(e.message).toContain(`blob ${pushed.layers[0]!.digest}: received content has digest sha256:`);
    expect(isNodeletError(e.cause, 'NDL_IMAGE_DIGEST')).toBe(true);
    expect(svc.list()).toEqual([]);
  });
});

import { mkdtemp, readdir, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { isNodeletError } from '../../../core/errors/catalogue.ts';
import { ImageStore } from '../../../core/images/store.ts';
import { sha256 } from '../../harness/oci-push.ts';
import { canMountSmallFs, mountSmallFs } from '../../harness/small-fs.ts';

const roots: string[] = [];
afterAll(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))));
async function root(): Promise<string> {
  const r = await mkdtemp(join(tmpdir(), 'nodelet-store-'));
  roots.push(r);
  return r;
}
const bytes = Buffer.from('\0asm\x01\0\0\0store');
const stream = (b: Buffer, chunk = 3) => Readable.from(Array.from({ length: Math.ceil(b.length / chunk) }, (_, i) => b.subarray(i * chunk, (i + 1) * chunk)));

describe('ImageStore', () => {
  it('writes a verified blob under blobs/sha256/<hex>', async () => {
    const store = await ImageStore.open(await root());
    const path = await store.writeBlob(sha256(bytes), bytes.length, stream(bytes));
    expect(path).toBe(store.blobPath(sha256(bytes)));
    expect(store.hasBlob(sha256(bytes))).toBe(true);
  });

  it('stops reading a blob larger than declared and leaves no file', async () => {
    const r = await root();
    const store = await ImageStore.open(r);
    const err = await store.writeBlob(sha256(bytes), 4, stream(bytes)).catch((e: unknown) => e);
    expect(isNodeletError(err, 'NDL_IMAGE_DIGEST')).toBe(true);
    expect((err as Error).message).toContain('larger than its declared 4 bytes');
    expect(await readdir(join(r, 'images', 'tmp'))).toEqual([]);
    expect(store.hasBlob(sha256(bytes))).toBe(false);
  });

  it('rejects a short blob', async () => {
    const store = await ImageStore.open(await root());
    const err = await store.writeBlob(sha256(bytes), bytes.length + 1, stream(bytes)).catch((e: unknown) => e);
    expect((err as Error).message).toContain(`received ${bytes.length} bytes, expected ${bytes.length + 1}`);
  });

  it('rejects digests it cannot store', async () => {
    const store = await ImageStore.open(await root());
    expect(() => store.blobPath('sha256:../../etc/passwd')).toThrow(/unsupported digest/);
    expect(() => store.blobPath('md5:abc')).toThrow(/unsupported digest/);
  });

  it('reloads the index, dropping entries whose blob is gone, and empties tmp', async () => {
    const r = await root();
    const store = await ImageStore.open(r);
    await store.writeBlob(sha256(bytes), bytes.length, stream(bytes));
    const entry = { repository: 'h/x', digest: sha256(Buffer.from('m')), layerDigest: sha256(bytes), layerMediaType: 'application/wasm', size: bytes.length };
    await store.record(['h/x:v1'], entry);
    await store.record(['h/gone:v1'], { ...entry, layerDigest: sha256(Buffer.from('gone')) });
    await writeFile(join(r, 'images', 'tmp', 'leftover'), 'x');
    const again = await ImageStore.open(r);
    expect(again.lookup('h/x:v1')).toEqual(entry);
    expect(again.lookup('h/gone:v1')).toBeUndefined();
    expect(await readdir(join(r, 'images', 'tmp'))).toEqual([]);
  });

  it('starts empty on a corrupt index', async () => {
    const r = await root();
    await mkdir(join(r, 'images'), { recursive: true });
    await writeFile(join(r, 'images', 'index.json'), '{not json');
    expect((await ImageStore.open(r)).entries()).toEqual([]);
    expect((await readdir(join(r, 'images'))).sort()).toEqual(['blobs', 'index.json.corrupt', 'tmp']);
  });

  it.skipIf(!canMountSmallFs)(
    'on a full disk an index write fails whole: the previous index stays and no part of the new one is left (root: a tmpfs)',
    async () => {
      const fs = mountSmallFs(256 * 1024, 'store-full-');
      try {
        const store = await ImageStore.open(fs.dir);
        const digest = sha256(bytes);
        await store.writeBlob(digest, bytes.length, stream(bytes));
        const entry = { repository: 'registry.example/a', digest, layerDigest: digest, layerMediaType: 'application/wasm', size: bytes.length };
        await store.record(['a:v1'], entry);
        const before = await readFile(join(fs.dir, 'images', 'index.json'), 'utf8');
        fs.fill();
        const many = Array.from({ length: 200 }, (_, i) => `registry.example/many/image-${i}:v1`);
        await expect(store.record(many, entry)).rejects.toMatchObject({ code: 'ENOSPC' });
        expect(await readFile(join(fs.dir, 'images', 'index.json'), 'utf8')).toBe(before);
        expect(await readdir(join(fs.dir, 'images', 'tmp'))).toEqual([]);
        fs.free();
        await store.record(['b:v1'], entry);
        expect(Object.keys(JSON.parse(await readFile(join(fs.dir, 'images', 'index.json'), 'utf8')).references)).toContain('b:v1');
      } finally {
        fs.cleanup();
      }
    },
  );
});

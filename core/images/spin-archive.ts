/**
 * Spin's archive layers (`application/vnd.wasm.content.bundle.v1.tar+gzip`: `spin registry push`
 * writes one per component's file mount when `SPIN_OCI_ARCHIVE_LAYERS` is set or the app would
 * exceed 500 layers). The locked app names each file by the sha256 of its content, as for data
 * layers; so each regular file of the archive is stored as a blob under its own digest (as Spin's
 * own cache does), and the provider finds it like any other file. Names, links and modes in the
 * archive do not matter; entries other than regular files are skipped. A file is spooled to the
 * store's temp directory while it is hashed, never held in memory; all of them together may take
 * what the image filesystem can (less its reserve, as for image volumes).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { extract } from 'tar-stream';
import { nodeletError } from '../errors/index.ts';
import type { ImageStore } from './store.ts';
import { freeSpaceLimits } from './volume-pull.ts';

/** The media type of Spin's archive layers. */
export const SPIN_ARCHIVE_TYPE = 'application/vnd.wasm.content.bundle.v1.tar+gzip';

/** Stores every regular file of the archive blob `digest` as a blob; resolves to their digests. */
export async function unpackSpinArchive(store: ImageStore, digest: string, signal?: AbortSignal): Promise<string[]> {
  const found = new Set<string>();
  // As for image volumes: what the image filesystem can take, less its reserve (a gzip bomb fills no disk).
  const { maxBytes } = await freeSpaceLimits(store.tmpDir);
  let total = 0;
  const ex = extract();
  const done = pipeline(createReadStream(store.blobPath(digest)), createGunzip(), ex, { signal });
  try {
    for await (const entry of ex) {
      if (entry.header.type !== 'file') {
        entry.resume();
        continue;
      }
      const hash = createHash('sha256');
      const tmp = join(store.tmpDir, `archive-${randomBytes(6).toString('hex')}`);
      try {
        let size = 0;
        const count = new Transform({
          transform(chunk: Buffer, _e, cb) {
            size += chunk.length;
            total += chunk.length;
            if (total > maxBytes) return cb(nodeletError('NDL_IMAGE_FORMAT', `its content exceeds the ${maxBytes} bytes the image filesystem can take`));
            hash.update(chunk);
            cb(null, chunk);
          },
        });
        await pipeline(entry, count, createWriteStream(tmp), { signal });
        const fileDigest = `sha256:${hash.digest('hex')}`;
        if (!store.hasBlob(fileDigest)) await store.writeBlob(fileDigest, size, createReadStream(tmp), signal);
        found.add(fileDigest);
      } finally {
        await rm(tmp, { force: true });
      }
    }
    await done;
  } catch (e) {
    done.catch(() => undefined);
    throw nodeletError('NDL_IMAGE_FORMAT', `Spin archive layer ${digest} cannot be unpacked: ${(e as Error).message}`);
  }
  return [...found];
}

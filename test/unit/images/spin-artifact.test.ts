// Spin applications pulled by OciImageService from a real docker-registry (core/images/spin-artifact.ts):
// both layouts `spin registry push` has written, the blobs handed to the provider, image GC.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImageRequest } from '@nodelet/plugin-api/v1';
import { OciImageService } from '../../../core/images/image-service.ts';
import { SPIN_APP_TYPE, spinArtifactOf } from '../../../core/images/spin-artifact.ts';
import { SPIN_ARCHIVE_TYPE } from '../../../core/images/spin-archive.ts';
import { pack } from 'tar-stream';
import { gzipSync } from 'node:zlib';
import { startRegistry, type TestRegistry } from '../../harness/registry.ts';
import { pushImage, sha256, tinyModule } from '../../harness/oci-push.ts';

let reg: TestRegistry;
const roots: string[] = [];
beforeAll(async () => {
  reg = await startRegistry();
});
afterAll(async () => {
  await reg?.stop();
  await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
});

const WASM = 'application/vnd.wasm.content.layer.v1+wasm';
const DATA = 'application/vnd.wasm.content.layer.v1+data';
const req = (accept: readonly string[]): ImageRequest => ({ pullPolicy: 'IfNotPresent', credentials: [], acceptLayerTypes: accept });

async function service() {
  const root = await mkdtemp(join(tmpdir(), 'nodelet-spin-'));
  roots.push(root);
  return OciImageService.open({ rootDir: root });
}

/** Pushes a two-layer app in `layout`; returns its parts. */
async function pushApp(repo: string, layout: 'layer' | 'config') {
  const wasm = tinyModule(`spin-${repo}`);
  const data = Buffer.from(`static file of ${repo}\n`.repeat(20));
  const locked = Buffer.from(JSON.stringify({ spin_lock_version: 0, triggers: [], components: [], repo }));
  const layers = [
    { mediaType: WASM, bytes: wasm },
    { mediaType: DATA, bytes: data },
  ];
  if (layout === 'config') await pushImage(reg.host, repo, 'v1', { mediaType: SPIN_APP_TYPE, bytes: locked }, layers);
  else
    await pushImage(
      reg.host,
      repo,
      'v1',
      { mediaType: 'application/vnd.oci.image.config.v1+json', bytes: Buffer.from('{"architecture":"wasm","os":"wasip1"}') },
      [...layers, { mediaType: SPIN_APP_TYPE, bytes: locked }],
    );
  return { wasm, data, locked };
}

describe('Spin application artifacts', () => {
  for (const layout of ['layer', 'config'] as const) {
    it(`pulls an app whose locked app is the ${layout === 'layer' ? 'last layer (newer Spin)' : "manifest's config (older Spin)"}: its path and every layer's by digest`, async () => {
      const app = await pushApp(`app-${layout}`, layout);
      const svc = await service();
      const img = await svc.pull(`${reg.host}/app-${layout}:v1`, req([SPIN_APP_TYPE, 'application/wasm', WASM]));
      expect(await readFile(img.path)).toEqual(app.locked);
      expect(Object.keys(img.blobs ?? {}).sort()).toEqual([sha256(app.wasm), sha256(app.data)].sort());
      expect(await readFile(img.blobs![sha256(app.wasm)]!)).toEqual(app.wasm);
      expect(await readFile(img.blobs![sha256(app.data)]!)).toEqual(app.data);
      expect(img.cached).toBe(false);
      // A second pull is answered from the store, blobs included.
      const again = await svc.pull(`${reg.host}/app-${layout}:v1`, req([SPIN_APP_TYPE, WASM]));
      expect(again.cached).toBe(true);
      expect(again.blobs).toEqual(img.blobs);
    });
  }

  it('gives a caller that does not accept Spin apps the first Wasm layer, as before', async () => {
    const app = await pushApp('app-plain', 'layer');
    const img = await (await service()).pull(`${reg.host}/app-plain:v1`, req(['application/wasm', WASM]));
    expect(await readFile(img.path)).toEqual(app.wasm);
    expect(img.blobs).toBeUndefined();
  });

  it("image GC keeps a running app's layers and deletes them all once it is unused", async () => {
    await pushApp('app-gc', 'layer');
    const svc = await service();
    const img = await svc.pull(`${reg.host}/app-gc:v1`, req([SPIN_APP_TYPE, WASM]));
    const freed = await svc.deleteUnused(1 << 30, [img.image], 0);
    expect(freed).toBe(0);
    expect(svc.list()).toHaveLength(1);
    await svc.deleteUnused(1 << 30, [], 0);
    expect(svc.list()).toHaveLength(0);
  });

  it("stores each file of an archive layer (Spin's archive form) as a blob of its own digest", async () => {
    const files = { 'a.txt': 'first file\n'.repeat(30), 'dir/b.txt': 'second file\n'.repeat(30) };
    const p = pack();
    for (const [name, text] of Object.entries(files)) p.entry({ name }, text);
    p.entry({ name: 'dir/', type: 'directory' });
    p.finalize();
    const chunks: Buffer[] = [];
    for await (const c of p) chunks.push(c as Buffer);
    const archive = gzipSync(Buffer.concat(chunks));
    const wasm = tinyModule('spin-archive');
    const locked = Buffer.from(JSON.stringify({ spin_lock_version: 0, triggers: [], components: [] }));
    await pushImage(reg.host, 'app-archive', 'v1', { mediaType: 'application/vnd.oci.image.config.v1+json', bytes: Buffer.from('{}') }, [
      { mediaType: WASM, bytes: wasm },
      { mediaType: SPIN_ARCHIVE_TYPE, bytes: archive },
      { mediaType: SPIN_APP_TYPE, bytes: locked },
    ]);
    const img = await (await service()).pull(`${reg.host}/app-archive:v1`, req([SPIN_APP_TYPE, WASM]));
    for (const text of Object.values(files)) expect(await readFile(img.blobs![sha256(Buffer.from(text))]!, 'utf8')).toBe(text);
    expect(Object.keys(img.blobs!)).toHaveLength(4); // the wasm, the archive, two files
  });

  it('fails the pull of an archive layer that is not a gzipped tar, naming it', async () => {
    const bad = Buffer.from('not an archive');
    await pushImage(reg.host, 'app-bad-archive', 'v1', { mediaType: 'application/vnd.oci.image.config.v1+json', bytes: Buffer.from('{}') }, [
      { mediaType: SPIN_ARCHIVE_TYPE, bytes: bad },
      { mediaType: SPIN_APP_TYPE, bytes: Buffer.from('{}') },
    ]);
    await expect((await service()).pull(`${reg.host}/app-bad-archive:v1`, req([SPIN_APP_TYPE]))).rejects.toThrow(
      new RegExp(`Spin archive layer ${sha256(bad)} cannot be unpacked`),
    );
  });

  it('finds no Spin app in a plain Wasm artifact', () => {
    const d = { mediaType: 'application/wasm', digest: `sha256:${'a'.repeat(64)}`, size: 1 };
    expect(
      spinArtifactOf({ kind: 'manifest', mediaType: 'x', config: { ...d, mediaType: 'application/vnd.wasm.config.v0+json' }, layers: [d] }),
    ).toBeUndefined();
  });
});

// Image GC: thresholds as upstream, least recently used unused modules first, with an injected
// disk-usage function; images pulled from a real docker-registry.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ImageRequest, PulledImage } from '@nodelet/plugin-api/v1';
import { collect, usagePercent, type DiskUsage } from '../../../core/images/image-gc.ts';
import { OciImageService } from '../../../core/images/image-service.ts';
import { WASM_LAYER_TYPES } from '../../../core/images/manifest.ts';
import { pushWasmArtifact, tinyModule } from '../../harness/oci-push.ts';
import { startRegistry, type TestRegistry } from '../../harness/registry.ts';

let reg: TestRegistry;
const roots: string[] = [];
beforeAll(async () => {
  reg = await startRegistry();
  for (const name of ['a', 'b', 'c']) await pushWasmArtifact(reg.host, `gc/${name}`, 'v1', tinyModule(name.repeat(992)));
});
afterAll(async () => {
  await reg?.stop();
  await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
});
afterEach(() => {
  vi.useRealTimers();
});

const req: ImageRequest = { pullPolicy: 'IfNotPresent', credentials: [], acceptLayerTypes: WASM_LAYER_TYPES };
const policy = { highThresholdPercent: 85, lowThresholdPercent: 80 };

/** A fake 10 000-byte disk holding 5 500 bytes of other data plus the store's modules. */
function fakeDisk(svc: OciImageService): () => Promise<DiskUsage> {
  return async () => ({ capacityBytes: 10_000, availableBytes: 10_000 - 5_500 - svc.list().reduce((n, i) => n + i.sizeBytes, 0) });
}

/** Pulls a, b, c at t=1000, 2000, 3000 (so a is the least recently used). */
async function threeImages(): Promise<{ svc: OciImageService; root: string; pulled: PulledImage[] }> {
  const root = await mkdtemp(join(tmpdir(), 'nodelet-gc-'));
  roots.push(root);
  const svc = await OciImageService.open({ rootDir: root });
  vi.useFakeTimers({ toFake: ['Date'] });
  const pulled: PulledImage[] = [];
  for (const [i, name] of ['a', 'b', 'c'].entries()) {
    vi.setSystemTime(1000 * (i + 1));
    pulled.push(await svc.pull(`${reg.host}/gc/${name}:v1`, req));
  }
  vi.useRealTimers();
  return { svc, root, pulled };
}
const names = (svc: OciImageService) =>
  svc
    .list()
    .flatMap((i) => i.names)
    .filter((n) => n.endsWith(':v1'))
    .sort();

describe('collect (the upstream arithmetic)', () => {
  it('computes usage like upstream and frees down to the low threshold, oldest first', async () => {
    expect(usagePercent({ capacityBytes: 1000, availableBytes: 151 })).toBe(85);
    const removed: string[] = [];
    const r = await collect(
      { capacityBytes: 1000, availableBytes: 100 },
      policy,
      [
        { digest: 'new', lastUsed: 30 },
        { digest: 'old', lastUsed: 10 },
        { digest: 'mid', lastUsed: 20 },
        { digest: 'busy', lastUsed: 1 },
      ],
      new Set(['busy']),
      async (d) => {
        removed.push(d);
        return 60;
      },
      100,
    );
    expect(r).toEqual({ usagePercent: 90, amountToFree: 100, freedBytes: 120, removed: ['old', 'mid'] });
    expect(removed).toEqual(['old', 'mid']);
  });

  it('does nothing below the high threshold, and reports FreeDiskSpaceFailed when too little is eligible', async () => {
    const none = await collect({ capacityBytes: 1000, availableBytes: 160 }, policy, [{ digest: 'x', lastUsed: 0 }], new Set(), async () => 1);
    expect(none.removed).toEqual([]);
    const short = await collect(
      { capacityBytes: 1000, availableBytes: 0 },
      { ...policy, minAgeMs: 50 },
      [
        { digest: 'young', lastUsed: 90 },
        { digest: 'old', lastUsed: 10 },
      ],
      new Set(),
      async () => 30,
      100,
    );
    expect(short.removed).toEqual(['old']);
    expect(short.failure).toBe('Failed to garbage collect required amount of images. Attempted to free 200 bytes, but only found 30 bytes eligible to free.');
  });
});

describe('OciImageService.garbageCollect', () => {
  it('below the high threshold keeps everything', async () => {
    const { svc } = await threeImages();
    const r = await svc.garbageCollect(policy, [], async () => ({ capacityBytes: 10_000, availableBytes: 5_000 }));
    expect(r.usagePercent).toBe(50);
    expect(r.removed).toEqual([]);
    expect(names(svc)).toHaveLength(3);
  });

  it('at the high threshold deletes the least recently used module not in use, and status.images and the index follow', async () => {
    const {
      svc,
      root,
      pulled: [, b],
    } = await threeImages();
    // A cached pull uses a again (now), so b is the least recently used; c is in use.
    const a = await svc.pull(`${reg.host}/gc/a:v1`, { ...req, pullPolicy: 'Never' });
    const r = await svc.garbageCollect(policy, [`${reg.host}/gc/c:v1`], fakeDisk(svc));
    expect(r.usagePercent).toBe(85);
    expect(r.amountToFree).toBe(2_000 - 1_500);
    expect(r.removed).toEqual([`sha256:${b!.path.replace(/^.*\//, '')}`]);
    expect(r.freedBytes).toBe(1_000);
    expect(existsSync(b!.path)).toBe(false);
    expect(existsSync(a.path)).toBe(true);
    expect(names(svc)).toEqual([`${reg.host}/gc/a:v1`, `${reg.host}/gc/c:v1`]);
    const index = JSON.parse(await readFile(join(root, 'images', 'index.json'), 'utf8')) as { references: Record<string, unknown> };
    expect(Object.keys(index.references).some((k) => k.includes('/gc/b'))).toBe(false);
    const reopened = await OciImageService.open({ rootDir: root });
    expect(names(reopened)).toEqual([`${reg.host}/gc/a:v1`, `${reg.host}/gc/c:v1`]);
    const again = await svc.pull(`${reg.host}/gc/b:v1`, req);
    expect(again.cached).toBe(false);
    expect(await readFile(again.path)).toEqual(tinyModule('b'.repeat(992)));
  });

  it('keeps images in use however old, named by reference, image ID or digest, and says when it cannot free enough', async () => {
    const {
      svc,
      pulled: [a, b],
    } = await threeImages();
    const full = async () => ({ capacityBytes: 10_000, availableBytes: 0 });
    const r = await svc.garbageCollect(policy, [a!.imageID, b!.digest, `${reg.host}/gc/c:v1`], full);
    expect(r.removed).toEqual([]);
    expect(r.failure).toContain('Attempted to free 2000 bytes, but only found 0 bytes eligible to free.');
    expect(names(svc)).toHaveLength(3);
  });
});

describe('OciImageService.deleteUnused (disk pressure)', () => {
  it('deletes unused modules, least recently used first, until the bytes asked for are freed; in-use and young ones stay', async () => {
    const {
      svc,
      pulled: [a, b],
    } = await threeImages();
    const later = Date.now() + 10 * 60_000;
    expect(await svc.deleteUnused(1, [`${reg.host}/gc/c:v1`], 0, later)).toBe(1_000);
    expect(names(svc)).toHaveLength(2);
    expect(await svc.deleteUnused(10_000, [`${reg.host}/gc/c:v1`], 0, later)).toBe(1_000);
    expect(names(svc)).toEqual([`${reg.host}/gc/c:v1`]);
    expect(existsSync(a!.path) || existsSync(b!.path)).toBe(false);
    expect(await svc.deleteUnused(10_000, [], 60 * 60_000, later)).toBe(0); // c was used just now (minimum age)
  });
});

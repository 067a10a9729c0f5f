/**
 * `OciImageService`: the ImageService core offers providers. It resolves a
 * reference to a single-layer Wasm artifact (directly, or through the WASI entry
 * of an image index), keeps the module in the content-addressed store and
 * answers from memory when the image is cached.
 *
 *   pull(image) ─ parse ─▶ Never:        cached ? hit : ErrImageNeverPull
 *                          IfNotPresent: cached ? hit : fetch
 *                          Always:       HEAD tag → digest known and module present ? hit : fetch
 *   fetch (one per reference+identity): manifest ─▶ [index → wasm platform manifest] ─▶ layer
 *                                       ─▶ blob (one download per digest, verified) ─▶ record
 *   compat image (OCI config + tar layers): config ─▶ entrypoint ─▶ extract from the layers
 *                                       ─▶ module stored under its own digest ─▶ record
 *
 *   pullVolume(image): the same policies and credentials, for an image volume: the whole
 *   image unpacked into a read-only tree shared by its pods (image-volumes.ts); image GC
 *   collects trees with the modules, never one a pod's volume holds.
 */
import { createReadStream } from 'node:fs';
import { pipeline, Transform, type Readable } from 'node:stream';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ImageRequest, ImageService, PulledImage, RegistryCredential } from '@nodelet/plugin-api/v1';
import { nodeletError } from '../errors/index.ts';
import { credentialsFor, credentialsKey } from './credentials.ts';
import { PullAccess } from './pull-access.ts';
import { EXTRACTED_MODULE_TYPE, entrypointOf, extractModule, isCompatImage, readSmall, verifyBytes } from './compat-image.ts';
import { parseManifest, selectLayer, selectWasmPlatform, type Descriptor, type ParsedManifest } from './manifest.ts';
import { collect, statfsUsage, type DiskUsageFn, type ImageGcPolicy, type ImageGcResult } from './image-gc.ts';
import { invalidNameFailure, neverPullFailure, pullFailure } from './pull-error.ts';
import { formatReference, manifestReferenceOf, parseReference, registryHostOf, repositoryOf, type ImageReference } from './reference.ts';
import { RegistryClient, type RepositoryTarget } from './registry-client.ts';
import type { RegistryTransport } from './registry-transport.ts';
import { RegistryError } from './registry-error.ts';
import { SingleFlight } from './single-flight.ts';
import { ImageStore, type ImageEntry } from './store.ts';
import { SPIN_APP_TYPE, spinArtifactOf, type SpinArtifact } from './spin-artifact.ts';
import { SPIN_ARCHIVE_TYPE, unpackSpinArchive } from './spin-archive.ts';
import { ImageVolumes } from './image-volumes.ts';
import { TreeStore } from './tree-store.ts';
import type { ImageVolumeRequest, ImageVolumeService, PulledImageVolume } from './volume-pull.ts';

/** Options of {@link OciImageService.open}. */
export interface OciImageServiceOptions {
  /** nodelet's root dir; the store lives in `<rootDir>/images`. */
  readonly rootDir: string;
  /** Registries spoken to over plain HTTP (localhost and 127.0.0.0/8 always are). */
  readonly insecureRegistries?: readonly string[];
  /** The registry transport to use (tests may wrap one); defaults to registry-transport.ts's with the timeouts below. */
  readonly transport?: RegistryTransport;
  readonly userAgent?: string;
  /** A registry body that sends nothing for this long fails the pull (default 5 min, containerd's). */
  readonly noProgressTimeoutMs?: number;
  /** How long a registry or token endpoint may take to send response headers (default 30 s). */
  readonly headersTimeoutMs?: number;
  /** Called as a layer's bytes arrive (`nodelet pull` shows it); not called for stored blobs. */
  readonly onProgress?: (p: BlobProgress) => void;
}

/** How much of a blob has been received. */
export interface BlobProgress {
  readonly digest: string;
  readonly receivedBytes: number;
  readonly totalBytes: number;
}

/** `body` passed through unchanged, reporting the bytes received so far (at most every 1%, and at the end). */
function counted(body: Readable, digest: string, totalBytes: number, report: (p: BlobProgress) => void): Readable {
  let receivedBytes = 0;
  let reported = -1;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      receivedBytes += chunk.length;
      const pct = totalBytes > 0 ? Math.floor((receivedBytes * 100) / totalBytes) : 100;
      if (pct > reported) {
        reported = pct;
        report({ digest, receivedBytes, totalBytes });
      }
      done(null, chunk);
    },
  });
  return pipeline(body, counter, () => undefined);
}

/** One image for the node's `status.images`. */
export interface ImageSummary {
  /** `repository@digest` first, then the tagged references that resolved to it. */
  readonly names: string[];
  readonly sizeBytes: number;
}

interface Fetched {
  readonly entry: ImageEntry;
  readonly cached: boolean;
}

/** How a GC pass names an image volume tree among the module blobs. */
const TREE_ID = 'tree:';

/** Image names, image IDs and digests as store keys: digests as they are, references formatted (the rest dropped). */
function wantedNames(names: Iterable<string>): Set<string> {
  const wanted = new Set<string>();
  for (const name of names) {
    if (/^sha256:[0-9a-f]{64}$/.test(name)) {
      wanted.add(name);
      continue;
    }
    try {
      wanted.add(formatReference(parseReference(name)));
    } catch {
      /* not a reference: nothing to keep */
    }
  }
  return wanted;
}

/** The OCI distribution client and image store behind `ImageService`. */
export class OciImageService implements ImageService, ImageVolumeService {
  private readonly pulls = new SingleFlight<Fetched & { credential?: RegistryCredential }>();
  private readonly access = new PullAccess();
  private readonly volumes: ImageVolumes;

  private constructor(
    private readonly store: ImageStore,
    private readonly trees: TreeStore,
    private readonly client: RegistryClient,
    private readonly onProgress?: (p: BlobProgress) => void,
  ) {
    this.volumes = new ImageVolumes(trees, client, this.access);
  }

  /** Opens the store (reading its indexes once) and returns the service. */
  static async open(opts: OciImageServiceOptions): Promise<OciImageService> {
    const store = await ImageStore.open(opts.rootDir);
    const trees = await TreeStore.open(join(opts.rootDir, 'images'));
    return new OciImageService(store, trees, new RegistryClient(opts), opts.onProgress);
  }

  /** Pulls `image` per `req.pullPolicy`, or answers from the store. Failures are branded `ImagePull` errors. */
  async pull(image: string, req: ImageRequest): Promise<PulledImage> {
    let ref: ImageReference;
    try {
      ref = parseReference(image);
    } catch (e) {
      throw invalidNameFailure(image, e);
    }
    const key = formatReference(ref);
    const candidates = credentialsFor(ref, req.credentials);
    const hit = this.cached(ref, req.acceptLayerTypes);
    if (hit && req.pullPolicy !== 'Always' && this.access.allows(`${hit.repository}@${hit.digest}`, candidates)) {
      this.store.touch(hit.layerDigest);
      return this.result(image, hit, true);
    }
    if (req.pullPolicy === 'Never') throw neverPullFailure(image);
    const flightKey = `${key}\0${req.acceptLayerTypes.join(',')}\0${credentialsKey(candidates)}`;
    try {
      const got = await this.pulls.do(flightKey, (signal) => this.fetchAs(ref, key, candidates, req, signal), req.signal);
      this.store.touch(got.entry.layerDigest);
      this.access.record(`${got.entry.repository}@${got.entry.digest}`, got.credential);
      return this.result(image, got.entry, got.cached);
    } catch (e) {
      throw pullFailure(image, e);
    }
  }

  /** Pulls `image` as an image volume (see image-volumes.ts); `req.holder` then holds its tree against image GC. */
  pullVolume(image: string, req: ImageVolumeRequest): Promise<PulledImageVolume> {
    return this.volumes.pull(image, req);
  }

  /** Drops the holds of `holder` on image volume trees. */
  releaseVolumes(holder: string): void {
    this.volumes.release(holder);
  }

  /** The images in the store, one per manifest digest, for `status.images`. */
  list(): ImageSummary[] {
    const byDigest = new Map<string, { names: Set<string>; sizeBytes: number }>();
    for (const [key, entry] of this.store.entries()) {
      const id = `${entry.repository}@${entry.digest}`;
      const item = byDigest.get(id) ?? { names: new Set([id]), sizeBytes: entry.size };
      item.names.add(key);
      byDigest.set(id, item);
    }
    for (const { entry, keys } of this.trees.list()) {
      const id = `${entry.repository}@${entry.digest}`;
      const item = byDigest.get(id) ?? { names: new Set([id]), sizeBytes: 0 };
      for (const k of keys) item.names.add(k);
      item.sizeBytes += entry.size;
      byDigest.set(id, item);
    }
    return [...byDigest.values()].map((i) => ({ names: [...i.names], sizeBytes: i.sizeBytes }));
  }

  /**
   * One image GC pass (see image-gc.ts). `inUse` names the images running
   * containers use: references as written in pod specs, `repo@digest` image IDs,
   * or manifest / module digests. Image volume trees are collected with the
   * modules (named `tree:<digest>` in the result), except those a pod's volume
   * holds. Deleted images leave {@link list} at once.
   */
  async garbageCollect(policy: ImageGcPolicy, inUse: Iterable<string>, diskUsage: DiskUsageFn = statfsUsage, now = Date.now()): Promise<ImageGcResult> {
    const gc = this.gcContent(inUse, now);
    const usage = await diskUsage(this.store.dir);
    return collect(usage, policy, gc.candidates, gc.used, gc.remove, now);
  }

  /**
   * Deletes unused modules, least recently used first, until `bytes` are freed or
   * none is left (upstream `DeleteUnusedImages` under disk pressure); modules used
   * within `minAgeMs` are kept. Resolves to the bytes freed.
   */
  async deleteUnused(bytes: number, inUse: Iterable<string>, minAgeMs: number, now = Date.now()): Promise<number> {
    const gc = this.gcContent(inUse, now);
    // A pass at 100 % usage of a `bytes`-sized disk with a 0 % low threshold frees exactly `bytes`.
    const policy = { highThresholdPercent: 0, lowThresholdPercent: 0, minAgeMs };
    const r = await collect({ capacityBytes: bytes, availableBytes: 0 }, policy, gc.candidates, gc.used, gc.remove, now);
    return r.freedBytes;
  }

  /**
   * What a GC pass may delete (module blobs by digest, image volume trees as `tree:<digest>`),
   * what it must keep (those in use, touched now), and how to delete one.
   */
  private gcContent(inUse: Iterable<string>, now: number) {
    const wanted = wantedNames(inUse);
    const used = this.blobsInUse(wanted);
    for (const d of used) this.store.touch(d, now);
    for (const d of this.volumes.inUse(wanted)) {
      this.trees.touch(d, now);
      used.add(`${TREE_ID}${d}`);
    }
    const candidates = [...this.store.blobUsage(), ...this.trees.usage().map((t) => ({ digest: `${TREE_ID}${t.digest}`, lastUsed: t.lastUsed }))];
    const remove = (id: string) => (id.startsWith(TREE_ID) ? this.trees.remove(id.slice(TREE_ID.length)) : this.store.removeBlob(id));
    return { candidates, used, remove };
  }

  /** Module digests behind image names, image IDs and digests. */
  private blobsInUse(wanted: ReadonlySet<string>): Set<string> {
    const used = new Set<string>();
    for (const [key, entry] of this.store.entries()) {
      if (wanted.has(key) || wanted.has(entry.digest) || wanted.has(entry.layerDigest)) {
        used.add(entry.layerDigest);
        for (const d of entry.blobs ?? []) used.add(d);
      }
    }
    for (const d of wanted) if (this.store.hasBlob(d)) used.add(d);
    return used;
  }

  /** A cached entry usable by this request (memory only). */
  private cached(ref: ImageReference, accept: readonly string[]): ImageEntry | undefined {
    const entry = this.store.lookup(formatReference(ref));
    return entry && accept.includes(entry.layerMediaType) ? entry : undefined;
  }

  private result(image: string, entry: ImageEntry, cached: boolean): PulledImage {
    return {
      image,
      imageID: `${entry.repository}@${entry.digest}`,
      digest: entry.digest,
      path: this.store.blobPath(entry.layerDigest),
      size: entry.size,
      cached,
      ...(entry.blobs ? { blobs: Object.fromEntries(entry.blobs.map((d) => [d, this.store.blobPath(d)])) } : {}),
    };
  }

  /** Tries each candidate credential in turn; moves on only when one is refused. */
  private async fetchAs(
    ref: ImageReference,
    key: string,
    candidates: (RegistryCredential | undefined)[],
    req: ImageRequest,
    signal: AbortSignal,
  ): Promise<Fetched & { credential?: RegistryCredential }> {
    for (let i = 0; ; i++) {
      const target: RepositoryTarget = { host: registryHostOf(ref), repository: ref.path, credential: candidates[i], signal };
      try {
        return { ...(await this.fetchWith(ref, key, target, req.acceptLayerTypes)), credential: candidates[i] };
      } catch (e) {
        if (!(e instanceof RegistryError && e.unauthorized) || i === candidates.length - 1) throw e;
      }
    }
  }

  private async fetchWith(ref: ImageReference, key: string, target: RepositoryTarget, accept: readonly string[]): Promise<Fetched> {
    const repository = repositoryOf(ref);
    const known = await this.knownDigest(ref, target, accept);
    if (known) {
      await this.store.record([key], known);
      return { entry: known, cached: true };
    }
    const top = await this.client.getManifest(target, manifestReferenceOf(ref));
    let manifest = parseManifest(top.bytes, top.mediaType);
    if (manifest.kind === 'index') {
      const platform = selectWasmPlatform(manifest);
      const child = await this.client.getManifest(target, platform.digest);
      manifest = parseManifest(child.bytes, child.mediaType ?? platform.mediaType);
      if (manifest.kind !== 'manifest') throw nodeletError('NDL_IMAGE_FORMAT', `image index entry ${platform.digest} is itself an index`);
    }
    const spin = accept.includes(SPIN_APP_TYPE) ? spinArtifactOf(manifest) : undefined;
    if (spin) return this.fetchSpinApp(spin, key, repository, top.digest, target);
    const compat = isCompatImage(manifest) && accept.includes(EXTRACTED_MODULE_TYPE);
    const layer = compat ? await this.extractCompat(manifest, target) : selectLayer(manifest, accept);
    const present = this.store.hasBlob(layer.digest);
    await this.store.ensureBlob(
      layer.digest,
      layer.size,
      async (sig) => {
        const body = (await this.client.getBlob({ ...target, signal: sig }, layer.digest)).body;
        return this.onProgress ? counted(body, layer.digest, layer.size, this.onProgress) : body;
      },
      target.signal,
    );
    const entry: ImageEntry = { repository, digest: top.digest, layerDigest: layer.digest, layerMediaType: layer.mediaType, size: layer.size };
    await this.store.record([key, `${repository}@${top.digest}`], entry);
    return { entry, cached: present && !compat };
  }

  /**
   * A Spin application (spin-artifact.ts): the locked app and every layer become blobs
   * (fetched at most four at a time); the entry points at the locked app and lists the rest.
   */
  private async fetchSpinApp(spin: SpinArtifact, key: string, repository: string, digest: string, target: RepositoryTarget): Promise<Fetched> {
    const all = [spin.lockedApp, ...spin.layers];
    const present = all.every((d) => this.store.hasBlob(d.digest));
    const queue = [...all];
    const fetchOne = async (d: Descriptor) => {
      await this.store.ensureBlob(
        d.digest,
        d.size,
        async (sig) => {
          const body = (await this.client.getBlob({ ...target, signal: sig }, d.digest)).body;
          return this.onProgress ? counted(body, d.digest, d.size, this.onProgress) : body;
        },
        target.signal,
      );
    };
    await Promise.all(
      Array.from({ length: Math.min(4, queue.length) }, async () => {
        for (let d = queue.shift(); d; d = queue.shift()) await fetchOne(d);
      }),
    );
    const size = all.reduce((n, d) => n + d.size, 0);
    const unpacked: string[] = [];
    for (const l of spin.layers) if (l.mediaType === SPIN_ARCHIVE_TYPE) unpacked.push(...(await unpackSpinArchive(this.store, l.digest, target.signal)));
    const blobs = [...new Set([...spin.layers.map((l) => l.digest), ...unpacked])];
    const entry: ImageEntry = { repository, digest, layerDigest: spin.lockedApp.digest, layerMediaType: SPIN_APP_TYPE, size, blobs };
    await this.store.record([key, `${repository}@${digest}`], entry);
    return { entry, cached: present };
  }

  /**
   * A compat image: reads the config's entrypoint, extracts that file from the
   * layers and stores it as a blob under its own digest; returns its descriptor.
   */
  private async extractCompat(manifest: ParsedManifest & { kind: 'manifest' }, target: RepositoryTarget): Promise<Descriptor> {
    const config = manifest.config!;
    const configBytes = await readSmall((await this.client.getBlob(target, config.digest)).body);
    verifyBytes(config, configBytes, 'config');
    const entrypoint = entrypointOf(configBytes);
    const open = async (d: Descriptor) => (await this.client.getBlob(target, d.digest)).body;
    const module = await extractModule(manifest.layers, entrypoint, open, this.store.tmpDir);
    try {
      if (!this.store.hasBlob(module.digest)) await this.store.writeBlob(module.digest, module.size, createReadStream(module.path), target.signal);
    } finally {
      await rm(module.path, { force: true });
    }
    return { mediaType: EXTRACTED_MODULE_TYPE, digest: module.digest, size: module.size };
  }

  /**
   * For `Always`: the entry already stored for the manifest this reference resolves to
   * now (a pinned digest needs no request; a tag costs one HEAD). Undefined when unknown.
   */
  private async knownDigest(ref: ImageReference, target: RepositoryTarget, accept: readonly string[]): Promise<ImageEntry | undefined> {
    const byDigest = (digest: string) => this.cached({ domain: ref.domain, path: ref.path, digest }, accept);
    if (ref.digest) return byDigest(ref.digest);
    const digest = await this.client.headManifest(target, manifestReferenceOf(ref)).catch(() => undefined);
    return digest ? byDigest(digest) : undefined;
  }
}

/**
 * The image volume side of the image service: pulls per policy and credentials
 * (the same rules as module pulls, `PullAccess` shared with them), one fetch per
 * reference and credentials at a time (volume-pull.ts), and the holds that keep a
 * pod's trees from image GC.
 *
 *   pull(image) ─ parse ─▶ Never:        unpacked ? hit : ErrImageNeverPull
 *                          IfNotPresent: unpacked (and this pod may use it) ? hit : fetch
 *                          Always:       fetch (the manifest is asked; a known digest is not unpacked again)
 *                ─▶ the holder (`<pod uid>/<volume>`) holds the tree until `release`
 */
import type { RegistryCredential } from '@nodelet/plugin-api/v1';
import { credentialsFor, credentialsKey } from './credentials.ts';
import type { PullAccess } from './pull-access.ts';
import { invalidNameFailure, neverPullFailure, pullFailure } from './pull-error.ts';
import { formatReference, parseReference, registryHostOf, type ImageReference } from './reference.ts';
import type { RegistryClient, RepositoryTarget } from './registry-client.ts';
import { RegistryError } from './registry-error.ts';
import { SingleFlight } from './single-flight.ts';
import type { TreeEntry, TreeStore } from './tree-store.ts';
import { fetchImageVolume, type ImageVolumeRequest, type PulledImageVolume } from './volume-pull.ts';

/** Image volume pulls and holds over a {@link TreeStore}. */
export class ImageVolumes {
  private readonly pulls = new SingleFlight<{ entry: TreeEntry; cached: boolean; credential?: RegistryCredential }>();
  private readonly unpacks = new SingleFlight<void>();
  /** Trees by holder (`<pod uid>/<volume>`): never collected while held. */
  private readonly holds = new Map<string, Set<string>>();

  constructor(
    readonly trees: TreeStore,
    private readonly client: RegistryClient,
    private readonly access: PullAccess,
  ) {}

  /** Pulls `image` per `req.pullPolicy`, or answers from the trees; `req.holder` then holds the tree. Failures are branded `ImagePull` errors. */
  async pull(image: string, req: ImageVolumeRequest): Promise<PulledImageVolume> {
    let ref: ImageReference;
    try {
      ref = parseReference(image);
    } catch (e) {
      throw invalidNameFailure(image, e);
    }
    const key = formatReference(ref);
    const candidates = credentialsFor(ref, req.credentials);
    const hit = this.trees.lookup(key);
    if (hit && req.pullPolicy !== 'Always' && this.access.allows(`${hit.repository}@${hit.digest}`, candidates)) {
      return this.result(image, hit, true, req.holder);
    }
    if (req.pullPolicy === 'Never') throw neverPullFailure(image);
    const flightKey = `${key}\0${credentialsKey(candidates)}`;
    try {
      const got = await this.pulls.do(flightKey, (signal) => this.fetchAs(ref, key, candidates, signal), req.signal);
      this.access.record(`${got.entry.repository}@${got.entry.digest}`, got.credential);
      return this.result(image, got.entry, got.cached, req.holder);
    } catch (e) {
      throw pullFailure(image, e);
    }
  }

  /** Drops the holds of `holder`. */
  release(holder: string): void {
    this.holds.delete(holder);
  }

  /** Trees behind image names, image IDs and digests (`wanted`, as store keys), and every tree held. */
  inUse(wanted: ReadonlySet<string>): Set<string> {
    const used = new Set<string>();
    for (const { entry, keys } of this.trees.list()) if (wanted.has(entry.digest) || keys.some((k) => wanted.has(k))) used.add(entry.digest);
    for (const held of this.holds.values()) for (const d of held) used.add(d);
    return used;
  }

  private result(image: string, entry: TreeEntry, cached: boolean, holder: string | undefined): PulledImageVolume {
    this.trees.touch(entry.digest);
    if (holder !== undefined) this.holds.set(holder, new Set([...(this.holds.get(holder) ?? []), entry.digest]));
    return { image, imageID: `${entry.repository}@${entry.digest}`, digest: entry.digest, path: this.trees.path(entry.digest), size: entry.size, cached };
  }

  /** Tries each candidate credential in turn; moves on only when one is refused. */
  private async fetchAs(ref: ImageReference, key: string, candidates: (RegistryCredential | undefined)[], signal: AbortSignal) {
    const deps = { client: this.client, trees: this.trees, unpacks: this.unpacks };
    for (let i = 0; ; i++) {
      const target: RepositoryTarget = { host: registryHostOf(ref), repository: ref.path, credential: candidates[i], signal };
      try {
        return { ...(await fetchImageVolume(deps, ref, key, target)), credential: candidates[i] };
      } catch (e) {
        if (!(e instanceof RegistryError && e.unauthorized) || i === candidates.length - 1) throw e;
      }
    }
  }
}

/**
 * Who may use a cached image without pulling it again — upstream's "ensure
 * secret pulled images" (KEP-2535): an image a pod pulled with registry
 * credentials is not handed to another pod on the strength of the cache alone.
 * A pod may use a cached image if the image was pulled anonymously, or with one
 * of the credentials the pod presents; otherwise nodelet asks the registry again
 * with the pod's credentials (a manifest request; blobs already stored are not
 * downloaded again), and a refusal is the pod's ErrImagePull.
 *
 * Records live in memory: images pulled before nodelet started are treated as
 * preloaded and are not verified (upstream's default `NeverVerifyPreloadedImages`).
 */
import type { RegistryCredential } from '@nodelet/plugin-api/v1';
import { credentialsKey } from './credentials.ts';

const ANONYMOUS = 'anonymous';

/**
 * Pull records per image (`repository@manifest digest`: the same bytes in two
 * repositories, one public and one private, are two images here).
 */
export class PullAccess {
  private readonly records = new Map<string, Set<string>>();

  /** Remembers that image `id` was fetched (or verified) with `credential` (undefined = anonymously). */
  record(id: string, credential: RegistryCredential | undefined): void {
    const set = this.records.get(id) ?? new Set<string>();
    set.add(credential ? credentialsKey([credential]) : ANONYMOUS);
    this.records.set(id, set);
  }

  /** True if a pod presenting `candidates` may use the cached image `id` without asking the registry. */
  allows(id: string, candidates: readonly (RegistryCredential | undefined)[]): boolean {
    const set = this.records.get(id);
    if (!set || set.has(ANONYMOUS)) return true;
    return candidates.some((c) => c !== undefined && set.has(credentialsKey([c])));
  }
}

/**
 * Image pulls started while a new pod's network and volumes are set up.
 *
 * Upstream mounts a pod's volumes, then pulls its images, one after the other.
 * Neither needs the other: the longest step of a volume is usually the API
 * server's answer to a TokenRequest, and the pull (from the node's store, or a
 * registry) can run meanwhile. {@link prefetchPulls} starts the provider's
 * pulls early; the container driver's `pull` then awaits the one already
 * running instead of starting its own, and posts its events (`Pulling`,
 * `Pulled`, `Failed`), back-offs and waiting reasons as before, in the same
 * order after the volume set-up. What the user sees differs only in time.
 *
 * Only containers that never ran are prefetched (a new pod's first start): a
 * restart waits for its back-off and sees ready volumes, so it gains nothing.
 * A prefetch lives for one reconcile: the worker hands it to the driver's next
 * `sync` or drops it (volumes not ready yet). Every pull's rejection is handled
 * here; the `pull` that awaits it sees the error.
 *
 *   reconcile ──prefetchPulls──► pulls run ─┐
 *       │                                   ├─► driver.sync ──► pull(): await the prefetched one
 *       └──► network, volumes (TokenRequest)┘       (a spec naming another image: a pull of its own)
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { PullPolicy, PulledImage, RegistryCredential } from '@nodelet/plugin-api/v1';
import type { ContainerRecord } from './container-record.ts';

/** One pull started ahead of its container's start. */
export interface PrefetchedPull {
  /** The image as the spec named it when the pull started. */
  readonly image: string;
  /** When the pull started (`Date.now()`), for the `Pulled` event's duration. */
  readonly startedAt: number;
  /** The provider's answer (its rejection is handled: awaiting it throws the pull's error). */
  readonly result: Promise<PulledImage>;
}

/** The pulls of one reconcile, by container name. */
export type PrefetchedPulls = ReadonlyMap<string, PrefetchedPull>;

/** Upstream's default pull policy: `Always` for `:latest` or no tag, else `IfNotPresent`. */
export function imagePullPolicy(spec: V1Container): PullPolicy {
  const image = spec.image ?? '';
  return (spec.imagePullPolicy ?? (/:latest$|^[^:@]*$/.test(image.replace(/^[^/]*\//, '')) ? 'Always' : 'IfNotPresent')) as PullPolicy;
}

/** What {@link prefetchPulls} needs from the driver. */
export interface PrefetchDeps {
  /** The pod's registry credentials (its pull secrets). */
  credentials(pod: V1Pod): Promise<RegistryCredential[]>;
  /** The provider's pull, with the pod's context. */
  pull(image: string, policy: PullPolicy, credentials: RegistryCredential[]): Promise<PulledImage>;
}

/**
 * Starts the pulls the driver's next `sync` will make first: the first init
 * container that never ran, or (no init container left to run) every app
 * container that never ran. Never throws.
 */
export function prefetchPulls(pod: V1Pod, init: readonly ContainerRecord[], app: readonly ContainerRecord[], d: PrefetchDeps): PrefetchedPulls {
  const fresh = (r: ContainerRecord) => r.waiting?.reason === 'ContainerCreating' && !r.running && !r.terminated && !r.last && !r.starting && !r.adopt;
  const pendingInit = init.find((r) => r.terminated?.exitCode !== 0);
  const wanted = pendingInit ? [pendingInit].filter(fresh) : app.filter(fresh);
  const out = new Map<string, PrefetchedPull>();
  if (wanted.length === 0) return out;
  let credentials: Promise<RegistryCredential[]> | undefined;
  for (const rec of wanted) {
    const spec = (rec.init ? pod.spec?.initContainers : pod.spec?.containers)?.find((c) => c.name === rec.name);
    if (!spec?.image) continue;
    const image = spec.image;
    const policy = imagePullPolicy(spec);
    credentials ??= Promise.resolve().then(() => d.credentials(pod));
    const result = credentials.then((c) => d.pull(image, policy, c));
    result.catch(() => undefined);
    out.set(rec.name, { image, startedAt: Date.now(), result });
  }
  return out;
}

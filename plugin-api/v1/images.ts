/** `imagePullPolicy` as in core/v1. */
export type PullPolicy = 'Always' | 'IfNotPresent' | 'Never';

/** Registry credentials, resolved by core from imagePullSecrets. */
export interface RegistryCredential {
  /** Registry host (and port) the credential is for. */
  readonly registry: string;
  /** User name for basic authentication. */
  readonly username?: string;
  /** Password for basic authentication. */
  readonly password?: string;
  /** A pre-issued bearer/identity token. */
  readonly token?: string;
}

/** Options for one pull. */
export interface ImagePullOptions {
  /** The container's `imagePullPolicy` (when the spec leaves it out: `Always` for a `:latest` or untagged image, else `IfNotPresent`, as upstream). */
  readonly pullPolicy: PullPolicy;
  /** Credentials from the pod's imagePullSecrets (and its service account's). */
  readonly credentials: readonly RegistryCredential[];
}

/** A locally available image. */
export interface PulledImage {
  /** The reference as written in the pod spec. */
  readonly image: string;
  /** `imageID` for the container status: `<repository>@sha256:<digest>`. */
  readonly imageID: string;
  /** The manifest digest, `sha256:<hex>`. */
  readonly digest: string;
  /** Path of the runnable artifact on disk (for the WASI provider: the .wasm module). */
  readonly path: string;
  /** Size of the artifact in bytes. */
  readonly size: number;
  /** True when nothing had to be fetched (for the `Pulled` event message). */
  readonly cached: boolean;
  /**
   * For an artifact of several blobs — a Spin application, whose `path` is its locked
   * application (JSON) — the path of each of its other layers by digest (`sha256:<hex>`).
   */
  readonly blobs?: Readonly<Record<string, string>>;
}

/** What an image service can be asked to accept. */
export interface ImageRequest extends ImagePullOptions {
  /** Layer media types the caller can run, in preference order. */
  readonly acceptLayerTypes: readonly string[];
  /** Aborts the pull. */
  readonly signal?: AbortSignal;
}

/** The OCI distribution client core offers to providers. */
export interface ImageService {
  /** Pulls (or finds in the store) `image` and returns its runnable layer. */
  pull(image: string, req: ImageRequest): Promise<PulledImage>;
}

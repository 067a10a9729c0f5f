/**
 * Where volumes and environment variables read API objects from. core never
 * calls the API server directly for these: the lead wires an implementation
 * (see `api-object-source.ts`, possibly backed by informers), tests use fakes.
 */
import type { V1ConfigMap, V1Secret } from '@kubernetes/client-node';

/** A bound service-account token request (TokenRequest API). */
export interface TokenRequestOptions {
  /** The single intended audience; absent = the API server's default audiences. */
  readonly audience?: string;
  /** Requested lifetime; the server may shorten it. */
  readonly expirationSeconds: number;
  /** The pod the token is bound to. */
  readonly podName: string;
  readonly podUID: string;
}

/** A token as returned in `TokenRequest.status`. */
export interface IssuedToken {
  readonly token: string;
  readonly expirationTimestamp: Date;
}

/** Read access to the objects pods refer to. `undefined` means NotFound; other failures reject. */
export interface ObjectSource {
  getConfigMap(namespace: string, name: string): Promise<V1ConfigMap | undefined>;
  getSecret(namespace: string, name: string): Promise<V1Secret | undefined>;
  requestServiceAccountToken(namespace: string, serviceAccount: string, opts: TokenRequestOptions): Promise<IssuedToken>;
  /** Drops what is kept for a pod that is gone (its tokens), as upstream's `DeleteServiceAccountToken`. */
  forgetPod?(podUID: string): void;
}

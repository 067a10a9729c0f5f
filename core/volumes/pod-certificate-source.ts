/**
 * Where `projected` volumes get the credential bundles of their
 * `podCertificate` sources (upstream's volume host
 * `GetPodCertificateCredentialBundle`). The composition root hands pod set-up
 * the pod certificate manager (core/certificates/pod-certificate-manager.ts);
 * standalone mode has none, and such a source then fails with a clear error.
 */
import type { V1Pod } from '@kubernetes/client-node';

/** The issued credentials of one podCertificate source. */
export interface PodCertificateBundle {
  /** The private key, PEM PKCS#8. */
  readonly privateKey: Buffer;
  /** The certificate chain the signer issued (leaf first), PEM `CERTIFICATE` blocks only. */
  readonly certificateChain: Buffer;
}

/** What the projected volume plugin reads. */
export interface PodCertificateSource {
  /**
   * The current key and chain of source `sourceIndex` of `pod`'s projected volume `volumeName`.
   * Never waits: while the certificate is not issued, or when its request was denied or failed,
   * throws an `NDL_POD_CERTIFICATE` error saying so (the volume's set-up fails and is retried).
   */
  credentialBundle(pod: V1Pod, volumeName: string, sourceIndex: number): PodCertificateBundle;
}

/** What pod set-up uses besides the bundles: when to re-sync a pod's volumes, and forgetting a pod. */
export interface PodCertificates extends PodCertificateSource {
  /** True when a credential bundle of the pod was issued, denied or failed at or after `since` (Date.now() ms). */
  changedSince(podUid: string, since: number): boolean;
  /** Calls `fn` with the UIDs of pods whose bundles were issued, denied or failed (their volumes re-sync at once). */
  onChange(fn: (podUids: string[]) => void): void;
  /** Drops everything kept for a pod that is gone (upstream `ForgetPod`). */
  forgetPod(podUid: string): void;
}

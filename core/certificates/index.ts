/** Certificates: X.509 helpers, upstream's file store, CSRs, rotation and TLS bootstrap. */
export { CertStore, pairTimestamp } from './cert-store.ts';
export { CertificateManager, jitteryDuration, satisfiesTemplate } from './cert-manager.ts';
export { requestCertificate, waitForCertificate, issuedCertificate } from './csr-client.ts';
export { PodCertificateManager, type PodCertificateManagerOptions } from './pod-certificate-manager.ts';
export { apiPodCertificates, type PodCertificateApi, type PodCertificateRequest, type PodCertificateRequestCache } from './pod-certificate-api.ts';
export { cleanCertificateChain, generatePodCertificateKey, POD_CERTIFICATE_KEY_TYPES, type PodCertificateKey } from './pod-certificate-keys.ts';
export {
  bootstrapClientCert,
  isKubeconfigStillValid,
  kubeconfigKeyPair,
  writeNodeKubeconfig,
  digestedCsrName,
  nodeClientSubject,
  CLIENT_KUBELET_SIGNER,
  KUBELET_SERVING_SIGNER,
  CLIENT_USAGES,
  SERVING_USAGES,
} from './bootstrap.ts';
export {
  createCertificate,
  createCsr,
  generateKeys,
  importKeys,
  KeyUsage,
  parseKeyPair,
  parseCsr,
  privateKeyPem,
  splitAddresses,
  type CertificateOptions,
  type KeyPair,
  type Keys,
  type Subject,
} from './x509.ts';

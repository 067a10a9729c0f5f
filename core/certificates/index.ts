/** Certificates: X.509 helpers, upstream's file store, CSRs, rotation and TLS bootstrap. */
export { CertStore, pairTimestamp, type CertStoreOptions } from './cert-store.ts';
export { CertificateManager, jitteryDuration, satisfiesTemplate, certSubject, type CertificateManagerOptions } from './cert-manager.ts';
export { requestCertificate, waitForCertificate, issuedCertificate, type CsrRef, type CsrRequest } from './csr-client.ts';
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
  type BootstrapOptions,
} from './bootstrap.ts';
export {
  createCertificate,
  createCsr,
  generateKeys,
  importKeys,
  KeyUsage,
  parseKeyPair,
  Pkcs10CertificateRequest,
  privateKeyPem,
  splitAddresses,
  type CertificateOptions,
  type KeyKind,
  type KeyPair,
  type Keys,
  type Subject,
} from './x509.ts';

/**
 * TLS bootstrap (`--bootstrap-kubeconfig`) and client certificate rotation
 * (`rotateCertificates`) for the composition root.
 */
import type { Logger } from '@nodelet/plugin-api/v1';
import {
  bootstrapClientCert,
  CertificateManager,
  CertStore,
  CLIENT_KUBELET_SIGNER,
  CLIENT_USAGES,
  kubeconfigKeyPair,
  nodeClientSubject,
  type KeyPair,
} from '../certificates/index.ts';
import type { NodeletOptions } from '../config/index.ts';
import type { ApiTransport } from '../kube/index.ts';

/**
 * TLS bootstrap (`--bootstrap-kubeconfig`) and client certificate rotation
 * (`rotateCertificates`). Returns the rotating credentials for the API clients,
 * or undefined when the kubeconfig's own credentials are used as they are.
 */
export async function startClientCertificates(o: NodeletOptions, log: Logger, signal: AbortSignal) {
  if (!o.kubeconfig) return undefined;
  const certLog = log.child({ component: 'certificates' });
  if (o.bootstrapKubeconfig) {
    await bootstrapClientCert({
      kubeconfig: o.kubeconfig,
      bootstrapKubeconfig: o.bootstrapKubeconfig,
      certDir: o.certDir,
      nodeName: o.nodeName,
      log: certLog,
      signal,
    });
  }
  if (!o.rotateCertificates) return undefined;
  let initial: KeyPair | undefined;
  try {
    initial = kubeconfigKeyPair(o.kubeconfig);
  } catch (e) {
    certLog.warn({ err: (e as Error).message }, "the kubeconfig's client certificate is unusable; requesting one");
  }
  let manager: CertificateManager | undefined;
  return {
    credentials: () => {
      const p = manager?.current();
      return p ? { cert: p.cert, key: p.key } : undefined;
    },
    start(api: () => ApiTransport) {
      manager = new CertificateManager({
        name: 'client',
        signerName: CLIENT_KUBELET_SIGNER,
        usages: CLIENT_USAGES,
        log: certLog,
        initial,
        store: new CertStore({ certDir: o.certDir, prefix: 'kubelet-client' }),
        template: () => nodeClientSubject(o.nodeName),
        api,
      });
      manager.start();
    },
    stop: async () => manager?.stop(),
  };
}

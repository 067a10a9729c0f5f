/**
 * Standalone mode has no apiserver to authenticate to the kubelet API, and
 * nodelet never answers anonymous callers. So, when no `--client-ca-file` is
 * given in standalone mode, nodelet makes a local client CA and one client
 * certificate (CN `nodelet-local-admin`) in `--cert-dir` (mode 0600, reused
 * on restart). Whoever can read `--cert-dir` can read logs — like the
 * kubeconfig of a cluster admin.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createCertificate, generateKeys, KeyUsage, privateKeyPem, type CertificateOptions } from '../certificates/index.ts';
import { replaceFile } from '../paths/index.ts';

/** Paths of the local client credentials. */
export interface LocalClient {
  caFile: string;
  certFile: string;
  keyFile: string;
}

/** Creates (or reuses) the local client CA and client certificate in `certDir`. */
export async function ensureLocalClient(certDir: string): Promise<LocalClient> {
  const out = { caFile: join(certDir, 'local-client-ca.crt'), certFile: join(certDir, 'local-client.crt'), keyFile: join(certDir, 'local-client.key') };
  if (existsSync(out.caFile) && existsSync(out.certFile) && existsSync(out.keyFile)) return out;
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(Date.now() + 365 * 24 * 3600_000);
  const [caKeys, clientKeys] = await Promise.all([generateKeys('ecdsa'), generateKeys('ecdsa')]);
  // Both certificates share the validity and the CA's signing key; only the subject, key and usages differ.
  const issue = (cn: string, keys: typeof caKeys, usage: Pick<CertificateOptions, 'keyUsage'> & Partial<CertificateOptions>) =>
    createCertificate({ subject: { cn }, publicKey: keys.pair.publicKey, signing: caKeys, notBefore, notAfter, ...usage });
  const ca = await issue('nodelet-local-client-ca', caKeys, { ca: true, keyUsage: KeyUsage.keyCertSign | KeyUsage.cRLSign });
  const client = await issue('nodelet-local-admin', clientKeys, { issuer: ca, keyUsage: KeyUsage.digitalSignature, extKeyUsage: ['clientAuth'] });
  // Each file whole or not there (a full disk): a set with a file missing is made again at the next start.
  await replaceFile(out.keyFile, await privateKeyPem(clientKeys), 0o600);
  await replaceFile(out.certFile, `${client.toString('pem')}\n`, 0o600);
  await replaceFile(out.caFile, `${ca.toString('pem')}\n`, 0o600);
  return out;
}

/** Reads the CA PEM of a local client. */
export const localClientCa = (c: LocalClient): Buffer => readFileSync(c.caFile);

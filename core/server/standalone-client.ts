/**
 * Standalone mode has no apiserver to authenticate to the kubelet API, and
 * nodelet never answers anonymous callers. So, when no `--client-ca-file` is
 * given in standalone mode, nodelet makes a local client CA and one client
 * certificate (CN `nodelet-local-admin`) in `--cert-dir` (mode 0600, reused
 * on restart). Whoever can read `--cert-dir` can read logs — like the
 * kubeconfig of a cluster admin.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import forge from 'node-forge';

/** Paths of the local client credentials. */
export interface LocalClient {
  caFile: string;
  certFile: string;
  keyFile: string;
}

function keyPair(): { pem: string; pub: forge.pki.PublicKey; priv: forge.pki.rsa.PrivateKey } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  return { pem, pub: forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }) as string), priv: forge.pki.privateKeyFromPem(pem) as forge.pki.rsa.PrivateKey };
}

function certificate(cn: string, pub: forge.pki.PublicKey, ca: boolean): forge.pki.Certificate {
  const c = forge.pki.createCertificate();
  c.publicKey = pub;
  c.serialNumber = `01${randomBytes(15).toString('hex')}`;
  c.validity.notBefore = new Date(Date.now() - 60_000);
  c.validity.notAfter = new Date(Date.now() + 365 * 24 * 3600_000);
  c.setSubject([{ name: 'commonName', value: cn }]);
  c.setExtensions(ca
    ? [{ name: 'basicConstraints', cA: true }, { name: 'keyUsage', keyCertSign: true, cRLSign: true }]
    : [{ name: 'basicConstraints', cA: false }, { name: 'keyUsage', digitalSignature: true, keyEncipherment: true }, { name: 'extKeyUsage', clientAuth: true }]);
  return c;
}

/** Creates (or reuses) the local client CA and client certificate in `certDir`. */
export function ensureLocalClient(certDir: string): LocalClient {
  const out = { caFile: join(certDir, 'local-client-ca.crt'), certFile: join(certDir, 'local-client.crt'), keyFile: join(certDir, 'local-client.key') };
  if (existsSync(out.caFile) && existsSync(out.certFile) && existsSync(out.keyFile)) return out;
  const caKeys = keyPair();
  const ca = certificate('nodelet-local-client-ca', caKeys.pub, true);
  ca.setIssuer(ca.subject.attributes);
  ca.sign(caKeys.priv, forge.md.sha256.create());
  const clientKeys = keyPair();
  const client = certificate('nodelet-local-admin', clientKeys.pub, false);
  client.setIssuer(ca.subject.attributes);
  client.sign(caKeys.priv, forge.md.sha256.create());
  writeFileSync(out.keyFile, clientKeys.pem, { mode: 0o600 });
  writeFileSync(out.certFile, forge.pki.certificateToPem(client), { mode: 0o600 });
  writeFileSync(out.caFile, forge.pki.certificateToPem(ca), { mode: 0o600 });
  return out;
}

/** Reads the CA PEM of a local client. */
export const localClientCa = (c: LocalClient): Buffer => readFileSync(c.caFile);

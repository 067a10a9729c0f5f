/**
 * A throwaway PKI for kubelet API tests: CAs and client certificates built with
 * node-forge (keys from node:crypto, which is much faster than forge's RSA).
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

export interface Pem {
  cert: string;
  key: string;
}

function keyPair(): { pub: forge.pki.PublicKey; priv: forge.pki.rsa.PrivateKey; pem: string } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  return {
    pub: forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }) as string),
    priv: forge.pki.privateKeyFromPem(pem) as forge.pki.rsa.PrivateKey,
    pem,
  };
}

function baseCert(pub: forge.pki.PublicKey, subject: forge.pki.CertificateField[]): forge.pki.Certificate {
  const c = forge.pki.createCertificate();
  c.publicKey = pub;
  c.serialNumber = `01${randomBytes(8).toString('hex')}`;
  c.validity.notBefore = new Date(Date.now() - 3600_000);
  c.validity.notAfter = new Date(Date.now() + 3600_000);
  c.setSubject(subject);
  return c;
}

/** A self-signed CA. */
export function makeCa(name: string): Pem & { forgeCert: forge.pki.Certificate; forgeKey: forge.pki.rsa.PrivateKey } {
  const k = keyPair();
  const subject = [{ name: 'commonName', value: name }];
  const c = baseCert(k.pub, subject);
  c.setIssuer(subject);
  c.setExtensions([
    { name: 'basicConstraints', cA: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true },
  ]);
  c.sign(k.priv, forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(c), key: k.pem, forgeCert: c, forgeKey: k.priv };
}

/** A client certificate signed by `ca` for user `cn` in groups `orgs`. */
export function makeClientCert(
  ca: ReturnType<typeof makeCa>, cn: string, orgs: string[] = [], usage: 'client' | 'server' = 'client',
): Pem {
  const k = keyPair();
  const c = baseCert(k.pub, [{ name: 'commonName', value: cn }, ...orgs.map((o) => ({ name: 'organizationName', value: o }))]);
  c.setIssuer(ca.forgeCert.subject.attributes);
  c.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', clientAuth: usage === 'client', serverAuth: usage === 'server' },
  ]);
  c.sign(ca.forgeKey, forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(c), key: k.pem };
}

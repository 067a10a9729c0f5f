/**
 * A throwaway PKI for kubelet API tests: CAs and client certificates built with
 * the same helpers nodelet uses (`core/certificates/x509.ts`, ECDSA P-256 keys).
 */
import type { X509Certificate } from '@peculiar/x509';
import { createCertificate, generateKeys, KeyUsage, privateKeyPem, type Keys } from '../../../core/certificates/index.ts';

export interface Pem {
  cert: string;
  key: string;
}

const validity = () => ({ notBefore: new Date(Date.now() - 3600_000), notAfter: new Date(Date.now() + 3600_000) });

/** A self-signed CA. */
export async function makeCa(name: string): Promise<Pem & { x509: X509Certificate; keys: Keys }> {
  const keys = await generateKeys('ecdsa');
  const x509 = await createCertificate({
    subject: { cn: name },
    publicKey: keys.pair.publicKey,
    signing: keys,
    ca: true,
    ...validity(),
    keyUsage: KeyUsage.keyCertSign | KeyUsage.cRLSign | KeyUsage.digitalSignature,
  });
  return { cert: x509.toString('pem'), key: await privateKeyPem(keys), x509, keys };
}

/** A client certificate signed by `ca` for user `cn` in groups `orgs`. */
export async function makeClientCert(
  ca: Awaited<ReturnType<typeof makeCa>>,
  cn: string,
  orgs: string[] = [],
  usage: 'client' | 'server' = 'client',
): Promise<Pem> {
  const keys = await generateKeys('ecdsa');
  const c = await createCertificate({
    subject: { cn, orgs },
    publicKey: keys.pair.publicKey,
    issuer: ca.x509,
    signing: ca.keys,
    ...validity(),
    keyUsage: KeyUsage.digitalSignature | KeyUsage.keyEncipherment,
    extKeyUsage: [usage === 'client' ? 'clientAuth' : 'serverAuth'],
  });
  return { cert: `${c.toString('pem')}\n`, key: await privateKeyPem(keys) };
}

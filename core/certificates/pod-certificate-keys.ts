/**
 * The keys of pod certificates (`projected.sources[].podCertificate`), made on
 * the node as upstream's kubelet does (pkg/kubelet/podcertificate,
 * `generateKeyAndProof`): a fresh key pair of the projection's `keyType`, and
 * the proof of possession the apiserver checks — an empty PKCS#10 request
 * (no subject, no attributes) signed with that key, which the
 * PodCertificateRequest carries as `spec.stubPKCS10Request` and from which the
 * signer takes the public key. The private key is written to the pod as PEM
 * PKCS#8 (`PRIVATE KEY`).
 *
 * Only node:crypto: the stub request is a few DER bytes written here, so a
 * pod certificate never loads `@peculiar/x509` (see x509.ts for its cost).
 */
import { generateKeyPair, sign, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { nodeletError } from '../errors/index.ts';

const generate = promisify(generateKeyPair);

/** The key types a podCertificate projection may ask for (core/v1 `PodCertificateProjection.keyType`). */
export const POD_CERTIFICATE_KEY_TYPES = ['RSA3072', 'RSA4096', 'ECDSAP256', 'ECDSAP384', 'ECDSAP521', 'ED25519'] as const;
export type PodCertificateKeyType = (typeof POD_CERTIFICATE_KEY_TYPES)[number];

/** A generated key: what the pod gets, and what the PodCertificateRequest carries. */
export interface PodCertificateKey {
  /** The private key, PEM PKCS#8 (`-----BEGIN PRIVATE KEY-----`), as upstream's `pemEncodeKey`. */
  readonly privateKeyPem: string;
  /** The empty PKCS#10 request signed with the key, DER (`spec.stubPKCS10Request`). */
  readonly stubCsrDer: Buffer;
}

/** How each key type is generated and which signature Go's `x509.CreateCertificateRequest` picks for it. */
const KINDS: Record<
  PodCertificateKeyType,
  { generate: () => Promise<{ privateKey: KeyObject; publicKey: KeyObject }>; hash: string | null; algorithm: Buffer }
> = {
  RSA3072: {
    generate: () => generate('rsa', { modulusLength: 3072, publicExponent: 0x10001 }),
    hash: 'sha256',
    algorithm: algorithmId('2a864886f70d01010b', true),
  },
  RSA4096: {
    generate: () => generate('rsa', { modulusLength: 4096, publicExponent: 0x10001 }),
    hash: 'sha256',
    algorithm: algorithmId('2a864886f70d01010b', true),
  },
  ECDSAP256: { generate: () => generate('ec', { namedCurve: 'P-256' }), hash: 'sha256', algorithm: algorithmId('2a8648ce3d040302') },
  ECDSAP384: { generate: () => generate('ec', { namedCurve: 'P-384' }), hash: 'sha384', algorithm: algorithmId('2a8648ce3d040303') },
  ECDSAP521: { generate: () => generate('ec', { namedCurve: 'P-521' }), hash: 'sha512', algorithm: algorithmId('2a8648ce3d040304') },
  ED25519: { generate: () => generate('ed25519'), hash: null, algorithm: algorithmId('2b6570') },
};

/** True when `t` is one of {@link POD_CERTIFICATE_KEY_TYPES}. */
export function isPodCertificateKeyType(t: string): t is PodCertificateKeyType {
  return (POD_CERTIFICATE_KEY_TYPES as readonly string[]).includes(t);
}

/**
 * Generates a key of `keyType` and its stub PKCS#10 request. RSA keys are
 * generated on libuv's pool (an RSA 4096 key takes around a second).
 */
export async function generatePodCertificateKey(keyType: string): Promise<PodCertificateKey> {
  if (!isPodCertificateKeyType(keyType)) {
    throw nodeletError('NDL_POD_CERTIFICATE', `unknown key type ${JSON.stringify(keyType)}; supported: ${POD_CERTIFICATE_KEY_TYPES.join(', ')}`);
  }
  const kind = KINDS[keyType];
  const { privateKey, publicKey } = await kind.generate();
  // CertificationRequestInfo: version 0, an empty subject, the public key, no attributes ([0] empty).
  const info = der(
    0x30,
    Buffer.from([0x02, 0x01, 0x00]),
    Buffer.from([0x30, 0x00]),
    publicKey.export({ type: 'spki', format: 'der' }),
    Buffer.from([0xa0, 0x00]),
  );
  // ECDSA signatures are ASN.1 DER (node's default dsaEncoding), RSA ones PKCS #1 v1.5, as Go writes them.
  const signature = sign(kind.hash, info, privateKey);
  const stubCsrDer = der(0x30, info, kind.algorithm, der(0x03, Buffer.from([0x00]), signature));
  return { privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, stubCsrDer };
}

/**
 * The certificate chain as the pod gets it, like upstream's `cleanCertificateChain`: every PEM
 * block re-written as a plain `CERTIFICATE` block (64-column base64), without block headers
 * and without whatever text lay between the blocks.
 */
export function cleanCertificateChain(chain: string): string {
  let out = '';
  for (const m of chain.matchAll(/-----BEGIN ([^\r\n-]*)-----\r?\n([\s\S]*?)-----END \1-----/g)) {
    const lines = m[2]!.split(/\r?\n/);
    // RFC 1421 headers (`Name: value` lines, ended by a blank line) are dropped, as Go's pem.Decode does.
    const headerEnd = lines[0]?.includes(':') ? lines.findIndex((l) => l.trim() === '') : -1;
    const body = lines
      .slice(headerEnd + 1)
      .join('')
      .replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body) || body.length === 0) continue;
    const b64 = Buffer.from(body, 'base64').toString('base64');
    out += `-----BEGIN CERTIFICATE-----\n${b64.replace(/(.{64})/g, '$1\n').replace(/\n?$/, '\n')}-----END CERTIFICATE-----\n`;
  }
  return out;
}

/** An ASN.1 DER element: `tag`, its definite length, then `parts`. */
function der(tag: number, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  const len: number[] = [];
  for (let n = body.length; n > 0; n = Math.floor(n / 256)) len.unshift(n % 256);
  const length = body.length < 0x80 ? [body.length] : [0x80 | len.length, ...len];
  return Buffer.concat([Buffer.from([tag, ...length]), body]);
}

/** An AlgorithmIdentifier for the OID whose DER content is `oidHex`; RSA ones carry a NULL parameter, as Go writes them. */
function algorithmId(oidHex: string, nullParams = false): Buffer {
  const oid = Buffer.from(oidHex, 'hex');
  return der(0x30, der(0x06, oid), ...(nullParams ? [Buffer.from([0x05, 0x00])] : []));
}

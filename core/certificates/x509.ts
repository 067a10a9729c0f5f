/**
 * X.509 building blocks on `@peculiar/x509` with keys from node:crypto's
 * WebCrypto: key pairs, certificates, certificate requests, PEM helpers.
 *
 * Names are always encoded as UTF8String (what Go's crypto/x509 writes for
 * values outside PrintableString, e.g. upstream's `host@<unix time>` CN), so
 * every certificate and CSR made here parses in Go.
 */
import { createHash, createPrivateKey, createPublicKey, randomBytes, webcrypto, X509Certificate as NodeX509 } from 'node:crypto';
import { isIP } from 'node:net';
import type * as x509 from '@peculiar/x509';
import { nodeletError } from '../errors/index.ts';

type X509Library = typeof import('@peculiar/x509');
let library: Promise<X509Library> | undefined;

/**
 * `@peculiar/x509` (with `reflect-metadata` and tsyringe), loaded on first use: only issuing a
 * certificate or a CSR needs it, which a running node does at start-up in standalone mode, at TLS
 * bootstrap and at rotation. Loaded at start it costs ~20 MiB of RSS for the life of the process
 * (bench/README.md, idle footprint); parsing uses node:crypto's X509Certificate instead.
 */
function x509Library(): Promise<X509Library> {
  library ??= (async () => {
    // @peculiar/x509 resolves its ASN.1 providers with tsyringe, which needs the Reflect metadata API first.
    await import('reflect-metadata');
    const lib = await import('@peculiar/x509');
    lib.cryptoProvider.set(webcrypto as unknown as Crypto);
    return lib;
  })();
  return library;
}

/** Key algorithms nodelet creates: RSA 2048 (upstream's self-signed pair) and ECDSA P-256 (upstream's CSR keys). */
export type KeyKind = 'rsa' | 'ecdsa';

const ALGS = {
  rsa: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) },
  ecdsa: { name: 'ECDSA', namedCurve: 'P-256' },
} as const;
const SIGN = { rsa: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, ecdsa: { name: 'ECDSA', hash: 'SHA-256' } } as const;

/** A WebCrypto key pair and its kind. */
export interface Keys {
  readonly kind: KeyKind;
  readonly pair: CryptoKeyPair;
}

/** Subject and subject alternative names of a certificate or request. */
export interface Subject {
  readonly cn: string;
  readonly orgs?: readonly string[];
  readonly dnsNames?: readonly string[];
  readonly ips?: readonly string[];
}

/** Generates a key pair (extractable, so it can be written as PEM). */
export async function generateKeys(kind: KeyKind): Promise<Keys> {
  const pair = (await webcrypto.subtle.generateKey(ALGS[kind] as never, true, ['sign', 'verify'])) as CryptoKeyPair;
  return { kind, pair };
}

/** The private key as PEM: PKCS#1 for RSA and SEC1 for ECDSA, the block types Go's keyutil writes. */
export async function privateKeyPem(keys: Keys): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.pair.privateKey));
  const key = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  return key.export({ format: 'pem', type: keys.kind === 'rsa' ? 'pkcs1' : 'sec1' }) as string;
}

/** Imports a PEM private key (PKCS#1, SEC1 or PKCS#8; RSA or ECDSA P-256) as WebCrypto keys. */
export async function importKeys(pem: string): Promise<Keys> {
  const key = createPrivateKey(pem);
  const kind: KeyKind =
    key.asymmetricKeyType === 'rsa'
      ? 'rsa'
      : key.asymmetricKeyType === 'ec'
        ? 'ecdsa'
        : (() => {
            throw nodeletError('NDL_CERT_PEM', `unsupported private key type ${key.asymmetricKeyType}`);
          })();
  const pkcs8 = key.export({ format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(key).export({ format: 'der', type: 'spki' });
  const privateKey = await webcrypto.subtle.importKey('pkcs8', pkcs8, ALGS[kind] as never, true, ['sign']);
  const publicKey = await webcrypto.subtle.importKey('spki', spki, ALGS[kind] as never, true, ['verify']);
  return { kind, pair: { privateKey, publicKey } as CryptoKeyPair };
}

/** A UTF8String-encoded name: CN, then one O per organization. */
function utf8Name(x509: X509Library, cn: string, orgs: readonly string[] = []): x509.Name {
  const rdns: x509.JsonAttributeAndObjectValue[] = [];
  for (const o of orgs) rdns.push({ O: [{ utf8String: o }] });
  rdns.push({ CN: [{ utf8String: cn }] });
  return new x509.Name(rdns);
}

function sanExtension(x509: X509Library, s: Subject): x509.Extension[] {
  const names: x509.JsonGeneralName[] = [
    ...(s.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(s.ips ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  return names.length ? [new x509.SubjectAlternativeNameExtension(names)] : [];
}

/** A random positive serial number in [1, 2^63), as upstream's certutil draws it. */
function serial(): string {
  const b = randomBytes(8);
  b[0]! &= 0x7f;
  if (b.every((x) => x === 0)) b[7] = 1;
  return b.toString('hex');
}

/** Options of {@link createCertificate}. */
export interface CertificateOptions {
  readonly subject: Subject;
  readonly publicKey: CryptoKey;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** The issuer; absent: self-signed with `signing`. */
  readonly issuer?: x509.X509Certificate;
  readonly signing: Keys;
  readonly ca?: boolean;
  /** KeyUsageFlags bits. */
  readonly keyUsage: number;
  readonly extKeyUsage?: readonly ('serverAuth' | 'clientAuth')[];
}

/** Creates a certificate (CA or leaf) signed by `signing`. */
export async function createCertificate(o: CertificateOptions): Promise<x509.X509Certificate> {
  const x509 = await x509Library();
  const name = utf8Name(x509, o.subject.cn, o.subject.orgs);
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(o.ca ?? false, undefined, true),
    new x509.KeyUsagesExtension(o.keyUsage, true),
    ...(o.extKeyUsage?.length ? [new x509.ExtendedKeyUsageExtension(o.extKeyUsage.map((u) => x509.ExtendedKeyUsage[u]))] : []),
    ...sanExtension(x509, o.subject),
  ];
  if (o.ca) extensions.push(await x509.SubjectKeyIdentifierExtension.create(o.publicKey));
  if (o.issuer) extensions.push(await x509.AuthorityKeyIdentifierExtension.create(o.issuer));
  return x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: name,
    issuer: o.issuer ? o.issuer.subjectName : name,
    notBefore: o.notBefore,
    notAfter: o.notAfter,
    extensions,
    publicKey: o.publicKey,
    signingKey: o.signing.pair.privateKey,
    signingAlgorithm: SIGN[o.signing.kind],
  });
}

/** Parses a PKCS#10 request (PEM or DER); loads the library with its Reflect polyfill (see x509Library). */
export async function parseCsr(csr: string | ArrayBuffer): Promise<x509.Pkcs10CertificateRequest> {
  const { Pkcs10CertificateRequest } = await x509Library();
  return new Pkcs10CertificateRequest(csr);
}

/**
 * Key usage bits: the values of `@peculiar/x509`'s KeyUsageFlags (RFC 5280's KeyUsage bit string,
 * as that library numbers it), kept here so that callers need not load the library.
 */
export const KeyUsage = {
  digitalSignature: 1,
  nonRepudiation: 2,
  keyEncipherment: 4,
  dataEncipherment: 8,
  keyAgreement: 16,
  keyCertSign: 32,
  cRLSign: 64,
  encipherOnly: 128,
  decipherOnly: 256,
} as const;

/** Creates a PKCS#10 request (PEM) for `subject`, SANs in an extensionRequest as Go's MakeCSR does. */
export async function createCsr(keys: Keys, subject: Subject): Promise<string> {
  const x509 = await x509Library();
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: utf8Name(x509, subject.cn, subject.orgs),
    keys: keys.pair,
    signingAlgorithm: SIGN[keys.kind],
    extensions: sanExtension(x509, subject),
  });
  return csr.toString('pem');
}

/** Splits IPs from DNS names. */
export function splitAddresses(names: readonly string[]): { dnsNames: string[]; ips: string[] } {
  const uniq = [...new Set(names.filter((n) => n !== ''))];
  return { dnsNames: uniq.filter((n) => !isIP(n)), ips: uniq.filter((n) => isIP(n) !== 0) };
}

/** The PEM blocks of `text` with the given label (`CERTIFICATE`, or any `... PRIVATE KEY` when label is `PRIVATE KEY`). */
export function pemBlocks(text: string, label: string): string[] {
  const re = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;
  const out: string[] = [];
  for (const m of text.matchAll(re)) {
    const l = m[1]!;
    if (l === label || (label === 'PRIVATE KEY' && l.endsWith('PRIVATE KEY'))) out.push(`${m[0]}\n`);
  }
  return out;
}

/** A certificate chain and its key, parsed and checked to match. */
export interface KeyPair {
  /** The certificate chain, PEM (leaf first). */
  readonly cert: string;
  /** The private key, PEM. */
  readonly key: string;
  /** The parsed leaf. */
  readonly leaf: NodeX509;
  readonly notBefore: Date;
  readonly notAfter: Date;
}

/** Parses a chain + key (as separate PEM texts, or one combined text for both); throws if unusable. */
export function parseKeyPair(certText: string, keyText: string = certText): KeyPair {
  const certs = pemBlocks(certText, 'CERTIFICATE');
  if (certs.length === 0) throw nodeletError('NDL_CERT_PEM', 'no CERTIFICATE block');
  const keys = pemBlocks(keyText, 'PRIVATE KEY');
  if (keys.length === 0) throw nodeletError('NDL_CERT_PEM', 'no PRIVATE KEY block');
  const leaf = new NodeX509(certs[0]!);
  if (!leaf.checkPrivateKey(createPrivateKey(keys[0]!))) throw nodeletError('NDL_CERT_PEM', 'the private key does not match the certificate');
  return { cert: certs.join(''), key: keys[0]!, leaf, notBefore: new Date(leaf.validFrom), notAfter: new Date(leaf.validTo) };
}

/** The public key's PKIX (SPKI) DER, as Go's x509.MarshalPKIXPublicKey writes it. */
export async function spkiDer(keys: Keys): Promise<Buffer> {
  return Buffer.from(await webcrypto.subtle.exportKey('spki', keys.pair.publicKey));
}

/** SHA-512/256, which upstream uses to name bootstrap CSRs. */
export const sha512_256 = (parts: readonly Buffer[]): Buffer => {
  const h = createHash('sha512-256');
  for (const p of parts) h.update(p);
  return h.digest();
};

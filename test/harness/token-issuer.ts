/**
 * A real token issuer for docker-registry's `auth: token` mode (the distribution
 * token protocol), written for the tests: node:http + node:crypto, ES256 JWTs.
 *
 *   client ──GET /v2/...──▶ registry ──401 WWW-Authenticate: Bearer realm=<issuer>/token,service,scope
 *   client ──GET /token?service&scope (Basic user:password)──▶ issuer
 *            unknown user / wrong password ──▶ 401 {"errors":[{"code":"UNAUTHORIZED",...}]}
 *            else ──▶ {"token": JWT{iss,sub,aud,exp,nbf,iat,jti,access:[{type,name,actions}]}}
 *   client ──GET /v2/... Authorization: Bearer <JWT>──▶ registry checks signature, iss, aud, exp, access
 *
 * The signing key is a P-256 key with a self-signed certificate made by openssl;
 * the registry trusts that certificate (`rootcertbundle`). distribution 2.8
 * finds the key by the JWT header's `kid` — the libtrust key ID of the public
 * key — or by an `x5c` chain that verifies up to the bundle; both are offered.
 *
 *   const issuer = await startTokenIssuer({ users: { alice: 'pw' } });
 *   const reg = await startRegistry({ token: issuer.registryAuth });
 */
import { execFileSync } from 'node:child_process';
import { createHash, createPrivateKey, createPublicKey, randomUUID, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One `access` entry of a token. */
export interface TokenAccess {
  readonly type: string;
  readonly name: string;
  readonly actions: string[];
}

/** Options of {@link startTokenIssuer}. */
export interface TokenIssuerOptions {
  /** Users and their passwords. */
  readonly users: Readonly<Record<string, string>>;
  /** Which actions a user (or `''` for anonymous) gets on a repository; default: everything asked for, nothing for anonymous. */
  readonly grant?: (user: string, repository: string, actions: string[]) => string[];
  /** How the JWT names its key: `kid` (libtrust key ID, default) or `x5c` (the certificate). */
  readonly keyRef?: 'kid' | 'x5c';
  /** Token lifetime in seconds (default 300). */
  readonly ttlSeconds?: number;
}

/** What `startRegistry({ token })` needs to trust this issuer. */
export interface RegistryTokenAuth {
  readonly realm: string;
  readonly service: string;
  readonly issuer: string;
  /** PEM file with the signing key's self-signed certificate. */
  readonly rootCertBundle: string;
}

/** A running token issuer. */
export interface TokenIssuer {
  readonly url: string;
  readonly registryAuth: RegistryTokenAuth;
  /** Token requests answered so far (user, requested scopes, status). */
  readonly requests: { user: string; scopes: string[]; status: number }[];
  stop(): Promise<void>;
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

/**
 * The libtrust key ID of a public key: sha256 of its DER SubjectPublicKeyInfo,
 * first 240 bits, base32 without padding, in 12 groups of 4 joined by `:`.
 */
export function libtrustKeyId(key: KeyObject): string {
  const der = key.export({ type: 'spki', format: 'der' });
  const digest = createHash('sha256').update(der).digest().subarray(0, 30);
  return base32(digest).match(/.{4}/g)!.join(':');
}

function base32(bytes: Buffer): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

/** A P-256 key and its self-signed certificate, made by openssl in `dir`. */
function makeSigningKey(dir: string): { key: KeyObject; certPath: string; certDer: Buffer } {
  const keyPath = join(dir, 'key.pem');
  const certPath = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      keyPath,
      '-out',
      certPath,
      '-days',
      '2',
      '-subj',
      '/CN=nodelet-test-token-issuer',
    ],
    { stdio: 'ignore' },
  );
  return { key: createPrivateKey(readFileSync(keyPath)), certPath, certDer: new X509Certificate(readFileSync(certPath)).raw };
}

/** Parses `repository:<name>:<actions>` scopes (several may be space-separated or repeated). */
function parseScopes(scopes: string[]): TokenAccess[] {
  const out: TokenAccess[] = [];
  for (const s of scopes.flatMap((x) => x.split(' ')).filter(Boolean)) {
    const last = s.lastIndexOf(':');
    const first = s.indexOf(':');
    if (first < 0 || last <= first) continue;
    out.push({
      type: s.slice(0, first),
      name: s.slice(first + 1, last),
      actions: s
        .slice(last + 1)
        .split(',')
        .filter(Boolean),
    });
  }
  return out;
}

function basicUser(req: IncomingMessage): { user: string; password: string } | undefined {
  const m = /^Basic\s+(.+)$/i.exec(req.headers.authorization ?? '');
  if (!m) return undefined;
  const text = Buffer.from(m[1]!, 'base64').toString('utf8');
  const i = text.indexOf(':');
  return i < 0 ? undefined : { user: text.slice(0, i), password: text.slice(i + 1) };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Starts the issuer on 127.0.0.1:<free port>. */
export async function startTokenIssuer(opts: TokenIssuerOptions): Promise<TokenIssuer> {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-token-issuer-'));
  const { key, certPath, certDer } = makeSigningKey(dir);
  const kid = libtrustKeyId(createPublicKey(key));
  const ttl = opts.ttlSeconds ?? 300;
  const grant = opts.grant ?? ((user: string, _repo: string, actions: string[]) => (user ? actions : []));
  const issuerName = 'nodelet-test-issuer';
  const service = 'nodelet-test-registry';
  const requests: TokenIssuer['requests'] = [];

  const jwt = (claims: object) => {
    const header = { typ: 'JWT', alg: 'ES256', ...(opts.keyRef === 'x5c' ? { x5c: [certDer.toString('base64')] } : { kid }) };
    const signingInput = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
    const signature = sign('sha256', Buffer.from(signingInput), { key, dsaEncoding: 'ieee-p1363' });
    return `${signingInput}.${b64url(signature)}`;
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://issuer');
    const scopes = url.searchParams.getAll('scope');
    const who = basicUser(req);
    const record = (status: number) => requests.push({ user: who?.user ?? '', scopes, status });
    if (url.pathname !== '/token') {
      record(404);
      return send(res, 404, { errors: [{ code: 'NOT_FOUND', message: 'no such endpoint' }] });
    }
    if (who && opts.users[who.user] !== who.password) {
      record(401);
      return send(res, 401, { errors: [{ code: 'UNAUTHORIZED', message: `invalid username or password for "${who.user}"` }] });
    }
    const user = who?.user ?? '';
    const access = parseScopes(scopes).map((a) => ({ ...a, actions: a.type === 'repository' ? grant(user, a.name, a.actions) : [] }));
    const now = Math.floor(Date.now() / 1000);
    const token = jwt({
      iss: issuerName,
      sub: user,
      aud: url.searchParams.get('service') ?? service,
      exp: now + ttl,
      nbf: now - 1,
      iat: now,
      jti: randomUUID(),
      access,
    });
    record(200);
    send(res, 200, { token, access_token: token, expires_in: ttl, issued_at: new Date(now * 1000).toISOString() });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    registryAuth: { realm: `${url}/token`, service, issuer: issuerName, rootCertBundle: certPath },
    requests,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

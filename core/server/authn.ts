/**
 * Authentication of kubelet API callers, as upstream's
 * `pkg/kubelet/server/auth.go` builds it (a union, first success wins):
 *
 * 1. x509 client certificate (`--client-ca-file`,
 *    `k8s.io/apiserver/pkg/authentication/request/x509`): the chain must verify
 *    against the client CA (Node's `socket.authorized`, the server having `ca`
 *    set and `requestCert: true`), the leaf must allow client auth if it lists
 *    extended key usages; CN = user name, every O = a group.
 * 2. `Authorization: Bearer <token>` checked by a {@link TokenAuthenticator}
 *    (`--authentication-token-webhook`: a TokenReview, see token-review.ts).
 *    A token that is presented but rejected is a 401, never anonymous.
 * 3. Anonymous (`--anonymous-auth=true` only): user `system:anonymous`, group
 *    `system:unauthenticated` — still authorized like any other user.
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';

/** The authenticated caller. */
export interface UserInfo {
  readonly name: string;
  readonly groups: readonly string[];
  /** Set for token users (from the TokenReview). */
  readonly uid?: string;
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** Checks a bearer token; resolves undefined for a token that is not valid; rejects if it could not tell. */
export type TokenAuthenticator = (token: string) => Promise<UserInfo | undefined>;

/** The anonymous user of upstream (`k8s.io/apiserver/pkg/authentication/request/anonymous`). */
export const ANONYMOUS: UserInfo = { name: 'system:anonymous', groups: ['system:unauthenticated'] };

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_EKU = '2.5.29.37.0';

function asList(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

/** The user behind a TLS connection, or undefined if it presented no acceptable certificate. */
function authenticateTls(socket: TLSSocket): UserInfo | undefined {
  if (typeof socket.getPeerCertificate !== 'function' || !socket.authorized) return undefined;
  const cert = socket.getPeerCertificate();
  if (!cert || !cert.subject) return undefined;
  const eku = cert.ext_key_usage;
  if (eku && eku.length > 0 && !eku.includes(CLIENT_AUTH) && !eku.includes(ANY_EKU)) return undefined;
  const name = asList(cert.subject.CN)[0];
  if (!name) return undefined;
  return { name, groups: asList(cert.subject.O) };
}

/** The bearer token of a request (`Authorization: Bearer x`, upstream's bearertoken), if any. */
function bearerToken(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  if (!h) return undefined;
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(h);
  return m?.[1];
}

/** How callers are authenticated. */
export interface AuthnOptions {
  /** Bearer-token checker; without it, tokens are ignored (upstream without the webhook). */
  readonly token?: TokenAuthenticator;
  /** Serve requests without credentials as {@link ANONYMOUS}. */
  readonly anonymous: boolean;
}

/**
 * The user of a request, or undefined (401). Rejects only when the token
 * checker could not answer (upstream also answers 401 then, and logs).
 */
export async function authenticateRequest(req: IncomingMessage, o: AuthnOptions): Promise<UserInfo | undefined> {
  const fromCert = authenticateTls(req.socket as TLSSocket);
  if (fromCert) return fromCert;
  const token = o.token ? bearerToken(req) : undefined;
  if (token && o.token) return o.token(token);
  if (o.anonymous) return ANONYMOUS;
  return undefined;
}

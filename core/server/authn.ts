/**
 * Authentication of kubelet API callers by x509 client certificate, as the
 * upstream kubelet does with `--client-ca-file`
 * (`k8s.io/apiserver/pkg/authentication/request/x509`): the chain must verify
 * against the client CA (Node's `socket.authorized`, the server having `ca`
 * set and `requestCert: true`), the leaf must allow client auth if it lists
 * extended key usages, and its subject gives the user: CN = name, O = groups.
 *
 * Bearer tokens (TokenReview) are not supported yet: a request without a valid
 * certificate is anonymous, and anonymous requests are always refused.
 */
import type { TLSSocket } from 'node:tls';

/** The authenticated caller. */
export interface UserInfo {
  readonly name: string;
  readonly groups: readonly string[];
}

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_EKU = '2.5.29.37.0';

function asList(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

/** The user behind a TLS connection, or undefined if it presented no acceptable certificate. */
export function authenticateTls(socket: TLSSocket): UserInfo | undefined {
  if (typeof socket.getPeerCertificate !== 'function' || !socket.authorized) return undefined;
  const cert = socket.getPeerCertificate();
  if (!cert || !cert.subject) return undefined;
  const eku = cert.ext_key_usage;
  if (eku && eku.length > 0 && !eku.includes(CLIENT_AUTH) && !eku.includes(ANY_EKU)) return undefined;
  const name = asList(cert.subject.CN)[0];
  if (!name) return undefined;
  return { name, groups: asList(cert.subject.O) };
}

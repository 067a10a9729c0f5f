/**
 * certificates.k8s.io/v1 CertificateSigningRequests, as client-go's
 * `util/certificate/csr` does it: create one (a fixed name is reused if it
 * already exists for the same request, else `generateName: csr-`), then wait
 * — watching the object, re-reading it on every change — until it is
 * approved and carries a certificate, or is denied / failed / deleted.
 */
import type * as k8s from '@kubernetes/client-node';
import { apiMessage, type ApiTransport, isApiConflict, isApiNotFound } from '../kube/index.ts';
import { nodeletError } from '../errors/index.ts';

const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

/** The two CSR calls, over `t`. */
function csrApi(t: ApiTransport) {
  return {
    createCertificateSigningRequest: (p: { body: k8s.V1CertificateSigningRequest }) =>
      t.request<k8s.V1CertificateSigningRequest>('POST', CSRS, { body: p.body }),
    readCertificateSigningRequest: (p: { name: string }) => t.request<k8s.V1CertificateSigningRequest>('GET', `${CSRS}/${encodeURIComponent(p.name)}`),
  };
}

/** What to request. */
export interface CsrRequest {
  /** A fixed name (upstream's bootstrap `node-csr-<digest>`); absent: `generateName: csr-`. */
  readonly name?: string;
  /** The PKCS#10 request, PEM. */
  readonly csrPem: string;
  readonly signerName: string;
  readonly usages: readonly string[];
  readonly expirationSeconds?: number;
}

/** A created CSR. */
export interface CsrRef {
  readonly name: string;
  readonly uid: string;
}

/** Creates the CSR; an existing one with the same fixed name and request is reused. */
export async function requestCertificate(t: ApiTransport, r: CsrRequest): Promise<CsrRef> {
  const api = csrApi(t);
  const body: k8s.V1CertificateSigningRequest = {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: r.name ? { name: r.name } : { generateName: 'csr-' },
    spec: {
      request: Buffer.from(r.csrPem).toString('base64'),
      signerName: r.signerName,
      usages: [...r.usages],
      ...(r.expirationSeconds ? { expirationSeconds: r.expirationSeconds } : {}),
    },
  };
  try {
    const made = await api.createCertificateSigningRequest({ body });
    return { name: made.metadata!.name!, uid: made.metadata!.uid! };
  } catch (e) {
    if (!(r.name && isApiConflict(e))) throw nodeletError('NDL_TLS_BOOTSTRAP', `cannot create CertificateSigningRequest: ${apiMessage(e)}`, e);
    const existing = await api.readCertificateSigningRequest({ name: r.name });
    const sameRequest = Buffer.from(existing.spec.request, 'base64').toString() === r.csrPem;
    if (!sameRequest || existing.spec.signerName !== r.signerName) {
      throw nodeletError('NDL_TLS_BOOTSTRAP', `CertificateSigningRequest ${r.name} exists for a different request`);
    }
    return { name: r.name, uid: existing.metadata!.uid! };
  }
}

/** The issued certificate (PEM), undefined while pending; throws when denied or failed. */
export function issuedCertificate(csr: k8s.V1CertificateSigningRequest): string | undefined {
  let approved = false;
  for (const c of csr.status?.conditions ?? []) {
    if (c.type === 'Denied')
      throw nodeletError('NDL_TLS_BOOTSTRAP', `certificate signing request is denied, reason: ${c.reason ?? ''}, message: ${c.message ?? ''}`);
    if (c.type === 'Failed')
      throw nodeletError('NDL_TLS_BOOTSTRAP', `certificate signing request failed, reason: ${c.reason ?? ''}, message: ${c.message ?? ''}`);
    if (c.type === 'Approved') approved = true;
  }
  const cert = csr.status?.certificate;
  return approved && cert ? Buffer.from(cert, 'base64').toString('utf8') : undefined;
}

/** Waits until `ref` is issued (see the module comment); rejects on timeout or abort. */
export async function waitForCertificate(t: ApiTransport, ref: CsrRef, timeoutMs: number, signal?: AbortSignal): Promise<string> {
  const api = csrApi(t);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    signal?.throwIfAborted();
    let csr: k8s.V1CertificateSigningRequest;
    try {
      csr = await api.readCertificateSigningRequest({ name: ref.name });
    } catch (e) {
      if (isApiNotFound(e)) throw nodeletError('NDL_TLS_BOOTSTRAP', `csr "${ref.name}" was deleted`);
      throw e;
    }
    if (csr.metadata?.uid !== ref.uid) throw nodeletError('NDL_TLS_BOOTSTRAP', `csr "${ref.name}" changed UIDs`);
    const cert = issuedCertificate(csr);
    if (cert) return cert;
    const left = deadline - Date.now();
    if (left <= 0) throw nodeletError('NDL_TLS_BOOTSTRAP', `timed out waiting for csr "${ref.name}" to be signed`);
    await nextChange(t, ref.name, csr.metadata!.resourceVersion!, Math.min(left, 60_000), signal);
  }
}

/** Resolves on the first watch event for `name` after `resourceVersion`, when the watch ends, or after `ms`. */
async function nextChange(t: ApiTransport, name: string, resourceVersion: string, ms: number, signal?: AbortSignal): Promise<void> {
  await new Promise<void>((resolve) => {
    let ctl: AbortController | undefined;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', finish);
      ctl?.abort();
      resolve();
    };
    const timer = setTimeout(finish, ms);
    signal?.addEventListener('abort', finish);
    t.watch(
      '/apis/certificates.k8s.io/v1/certificatesigningrequests',
      { fieldSelector: `metadata.name=${name}`, resourceVersion, allowWatchBookmarks: false },
      () => finish(),
      () => finish(),
    )
      .then((c) => {
        ctl = c;
        if (finished) c.abort();
      })
      .catch(() => setTimeout(finish, Math.min(ms, 1000)));
  });
}

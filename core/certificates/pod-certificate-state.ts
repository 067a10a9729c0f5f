/**
 * The states of one podCertificate source (the state machine is drawn and
 * driven in pod-certificate-manager.ts) and what follows from a state alone:
 * what the pod gets, how upstream's metric names it, and where a request's
 * conditions move it (upstream pkg/kubelet/podcertificate, `credState*`).
 */
import { nodeletError } from '../errors/index.ts';
import type { PodCertificateBundle } from '../volumes/index.ts';
import type { PodCertificateRequest } from './pod-certificate-api.ts';
import { cleanCertificateChain } from './pod-certificate-keys.ts';

/** upstream `refreshOverdueDuration`: past `beginRefreshAt` by this, a refresh is overdue (an event, and the metric's state). */
export const REFRESH_OVERDUE_MS = 10 * 60_000;

/** A bundle the signer issued, and which age events the pod already got. */
export interface Issued {
  readonly privateKey: Buffer;
  readonly certificateChain: Buffer;
  /** The signer's `beginRefreshAt` plus the jitter (Date.now() ms). */
  readonly beginRefreshAt: number;
  readonly notAfter: number;
  overdueReported: boolean;
  expiredReported: boolean;
}

/** A request nodelet created and waits on. */
export interface Pending {
  readonly privateKey: Buffer;
  readonly pcrName: string;
  /** When a request the watch still does not show is taken as deleted (Date.now() ms). */
  readonly abandonAt: number;
}

/** The state of one source. */
export type CredState =
  | { readonly kind: 'initial' }
  | ({ readonly kind: 'wait' } & Pending)
  | { readonly kind: 'fresh'; readonly issued: Issued }
  | { readonly kind: 'waitRefresh'; readonly issued: Issued; readonly refresh: Pending }
  | { readonly kind: 'denied' | 'failed'; readonly pcrName: string; readonly reason: string; readonly message: string };

/** What the pod gets in state `s`: the bundle, or the NDL_POD_CERTIFICATE error its volume set-up fails with. */
export function credentialBundleOf(s: CredState, source: { namespace: string; signerName: string; lastError?: string }): PodCertificateBundle {
  const pcr = (name: string) => `PodCertificateRequest ${source.namespace}/${name}`;
  switch (s.kind) {
    case 'fresh':
    case 'waitRefresh':
      return { privateKey: s.issued.privateKey, certificateChain: s.issued.certificateChain };
    case 'denied':
    case 'failed':
      throw nodeletError(
        'NDL_POD_CERTIFICATE',
        `${pcr(s.pcrName)} was permanently ${s.kind}: reason=${JSON.stringify(s.reason)} message=${JSON.stringify(s.message)}`,
      );
    case 'wait':
      throw nodeletError('NDL_POD_CERTIFICATE', `credential bundle is not issued yet: ${pcr(s.pcrName)} awaits signer ${source.signerName}`);
    case 'initial':
      throw nodeletError('NDL_POD_CERTIFICATE', `credential bundle is not issued yet${source.lastError ? `: ${source.lastError}` : ''}`);
  }
}

/** upstream's `metricsState`: the `state` label of `kubelet_podcertificate_states`. */
export function metricsState(s: CredState, now: number): string {
  switch (s.kind) {
    case 'initial':
    case 'wait':
      return 'not_yet_issued';
    case 'denied':
    case 'failed':
      return s.kind;
    case 'fresh':
    case 'waitRefresh':
      if (now > s.issued.notAfter) return 'expired';
      return now > s.issued.beginRefreshAt + REFRESH_OVERDUE_MS ? 'overdue_for_refresh' : 'fresh';
  }
}

/**
 * Where the conditions of `pcr`, the request of `pending`, move its source: `denied` or `failed`
 * (the first such condition, as upstream reads them by type), `fresh` with the issued chain
 * (cleaned) and `beginRefreshAt` plus `jitterMs`, or undefined while none is set. An Issued
 * request without its chain or times (the apiserver's validation prevents it) is an `error`.
 */
export function concluded(
  pcr: PodCertificateRequest,
  pending: Pending,
  jitterMs: number,
): Extract<CredState, { kind: 'fresh' | 'denied' | 'failed' }> | { error: string } | undefined {
  for (const c of pcr.status?.conditions ?? []) {
    if (c.type === 'Denied' || c.type === 'Failed') {
      return { kind: c.type === 'Denied' ? 'denied' : 'failed', pcrName: pending.pcrName, reason: c.reason ?? '', message: c.message ?? '' };
    }
    if (c.type === 'Issued') {
      const st = pcr.status!;
      const chain = cleanCertificateChain(st.certificateChain ?? '');
      const begin = Date.parse(st.beginRefreshAt ?? '');
      const notAfter = Date.parse(st.notAfter ?? '');
      if (!chain || Number.isNaN(begin) || Number.isNaN(notAfter)) {
        return {
          error: `PodCertificateRequest ${pcr.metadata.namespace}/${pending.pcrName} is Issued without a certificate chain, beginRefreshAt and notAfter`,
        };
      }
      const issued: Issued = {
        privateKey: pending.privateKey,
        certificateChain: Buffer.from(chain),
        beginRefreshAt: begin + jitterMs,
        notAfter,
        overdueReported: false,
        expiredReported: false,
      };
      return { kind: 'fresh', issued };
    }
  }
  return undefined;
}

/**
 * Rotates one certificate (the kubelet's client or serving certificate) as
 * client-go's `util/certificate/certificate_manager.go` does:
 *
 *   deadline = notBefore + lifetime × (0.7 + 0.2 × random)   (jitteryDuration)
 *            = now, when there is no certificate or it no longer fits the template
 *   at the deadline: new ECDSA P-256 key ─► CSR (signer, usages) ─► wait ≤ 15 min
 *   for approval + signature ─► store (`<prefix>-<date>.pem`, `-current.pem`) ─►
 *   `onChange` (callers swap it in for new connections)
 *   a failed attempt is retried after 2, 4, 8 and 16 s, then every 32 s.
 */
import type { ApiTransport } from '../kube/index.ts';
import type { Logger } from '@nodelet/plugin-api/v1';
import type { CertStore } from './cert-store.ts';
import { requestCertificate, waitForCertificate } from './csr-client.ts';
import { createCsr, generateKeys, privateKeyPem, type KeyPair, type Subject } from './x509.ts';
import { delaySequence, withJitter, type BackoffPolicy } from '../backoff/index.ts';
import { errorDetail, nodeletError } from '../errors/index.ts';

/** upstream `certificateWaitTimeout`. */
const CERTIFICATE_WAIT_TIMEOUT_MS = 15 * 60_000;
/** upstream's backoff of a failed rotation: 2 s doubling with 10 % jitter, 5 tries, then every 32 s. */
const ROTATION_BACKOFF: BackoffPolicy = { initialMs: 2_000, factor: 2, jitter: 0.1 };
/** The waits of {@link ROTATION_BACKOFF} before polling: 2, 4, 8, 16 s. */
export const ROTATION_RETRY_MS: readonly number[] = delaySequence(ROTATION_BACKOFF, 4);
const ROTATION_POLL_MS = 32_000;

/** upstream `jitteryDuration`: 70-90 % of `totalMs`. */
export function jitteryDuration(totalMs: number, random: () => number = Math.random): number {
  return totalMs * (1 + 0.2 * random()) - totalMs * 0.3;
}

/** The subject's parts of a parsed certificate. */
function certSubject(pair: KeyPair): Required<Subject> {
  const lines = pair.leaf.subject.split('\n');
  const cn = lines.find((l) => l.startsWith('CN='))?.slice(3) ?? '';
  const orgs = lines.filter((l) => l.startsWith('O=')).map((l) => l.slice(2));
  const sans = (pair.leaf.subjectAltName ?? '').split(', ').filter(Boolean);
  return {
    cn,
    orgs,
    dnsNames: sans.filter((s) => s.startsWith('DNS:')).map((s) => s.slice(4)),
    ips: sans.filter((s) => s.startsWith('IP Address:')).map((s) => s.slice(11).toLowerCase()),
  };
}

/** True when `pair` has the template's CN and at least its orgs and SANs (upstream certSatisfiesTemplate). */
export function satisfiesTemplate(pair: KeyPair, t: Subject): boolean {
  const s = certSubject(pair);
  const has = (have: readonly string[], want: readonly string[] = []) => want.every((w) => have.includes(w.toLowerCase()) || have.includes(w));
  return s.cn === t.cn && has(s.orgs, t.orgs) && has(s.dnsNames, t.dnsNames) && has(s.ips, t.ips);
}

/** Options of {@link CertificateManager}. */
export interface CertificateManagerOptions {
  /** For logs: `client` or `serving`. */
  readonly name: string;
  readonly store: CertStore;
  readonly signerName: string;
  /** Key usages requested (the key is always ECDSA, as upstream's generateCSR). */
  readonly usages: readonly string[];
  /** What to request; undefined while unknown (nothing is requested then). */
  readonly template: () => Subject | undefined;
  /** The client that creates and watches CSRs (given the current pair, which may be undefined). */
  readonly api: (current: KeyPair | undefined) => ApiTransport;
  readonly log: Logger;
  /** Used when the store is empty (e.g. the kubeconfig's own certificate). */
  readonly initial?: KeyPair;
  /** Called with every newly issued pair. */
  readonly onChange?: (pair: KeyPair) => void;
  readonly random?: () => number;
  readonly now?: () => number;
}

/** Keeps one certificate fresh (see the module comment). */
export class CertificateManager {
  private pair: KeyPair | undefined;
  private deadline: { pair: KeyPair; at: number } | undefined;
  private readonly abort = new AbortController();
  private running: Promise<void> | undefined;

  constructor(private readonly o: CertificateManagerOptions) {
    try {
      this.pair = o.store.current() ?? o.initial;
    } catch (e) {
      o.log.warn({ err: errorDetail(e), path: o.store.currentPath() }, `stored ${o.name} certificate unusable; a new one will be requested`);
      this.pair = o.initial;
    }
  }

  /** The current pair, if any. */
  current(): KeyPair | undefined {
    return this.pair;
  }

  private now(): number {
    return this.o.now?.() ?? Date.now();
  }

  /** When the next rotation is due (ms since the epoch). */
  nextRotationDeadline(): number {
    const t = this.o.template();
    if (!this.pair || (t && !satisfiesTemplate(this.pair, t))) return this.now();
    // One jittered deadline per certificate, drawn when it is first asked for.
    if (this.deadline?.pair !== this.pair) {
      const nb = this.pair.notBefore.getTime();
      this.deadline = { pair: this.pair, at: nb + jitteryDuration(this.pair.notAfter.getTime() - nb, this.o.random) };
    }
    return this.deadline.at;
  }

  /** Starts the rotation loop. */
  start(): void {
    this.running ??= this.loop().catch((e) => {
      if (!this.abort.signal.aborted) this.o.log.error({ err: errorDetail(e) }, `${this.o.name} certificate rotation stopped`);
    });
  }

  /** Stops the loop (an outstanding request is abandoned). */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
  }

  /** Requests, waits for and stores a new certificate once; returns it. */
  async rotate(): Promise<KeyPair> {
    const template = this.o.template();
    if (!template) throw nodeletError('NDL_TLS_BOOTSTRAP', `no ${this.o.name} certificate template yet`);
    const keys = await generateKeys('ecdsa');
    const [csrPem, keyPem] = await Promise.all([createCsr(keys, template), privateKeyPem(keys)]);
    const kc = this.o.api(this.pair);
    const ref = await requestCertificate(kc, { csrPem, signerName: this.o.signerName, usages: this.o.usages });
    this.o.log.info({ csr: ref.name, signer: this.o.signerName }, `${this.o.name} certificate signing request created`);
    const cert = await waitForCertificate(kc, ref, CERTIFICATE_WAIT_TIMEOUT_MS, this.abort.signal);
    const pair = await this.o.store.update(cert, keyPem);
    this.pair = pair;
    this.o.log.info({ csr: ref.name, notAfter: pair.notAfter.toISOString(), path: this.o.store.currentPath() }, `${this.o.name} certificate rotated`);
    this.o.onChange?.(pair);
    return pair;
  }

  private async sleep(ms: number): Promise<void> {
    if (ms <= 0) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        resolve();
      }
      this.abort.signal.addEventListener('abort', done, { once: true });
    });
  }

  private async loop(): Promise<void> {
    const signal = this.abort.signal;
    let logged: number | undefined;
    while (!signal.aborted) {
      const deadline = this.nextRotationDeadline();
      const wait = deadline - this.now();
      if (wait > 0 && deadline !== logged) {
        logged = deadline;
        this.o.log.info(
          { deadline: new Date(deadline).toISOString(), notAfter: this.pair?.notAfter.toISOString() },
          `waiting for the next ${this.o.name} certificate rotation`,
        );
      }
      // Re-check at least every minute so a template change (new node address) is noticed.
      await this.sleep(Math.min(wait, 60_000));
      if (signal.aborted) return;
      if (this.nextRotationDeadline() > this.now()) continue;
      if (!this.o.template()) {
        await this.sleep(1000);
        continue;
      }
      for (let attempt = 0; !signal.aborted; attempt++) {
        try {
          await this.rotate();
          break;
        } catch (e) {
          if (signal.aborted) return;
          const retry = ROTATION_RETRY_MS[attempt] ?? ROTATION_POLL_MS;
          this.o.log.warn({ err: errorDetail(e), retryInMs: retry }, `${this.o.name} certificate rotation failed`);
          await this.sleep(attempt < ROTATION_RETRY_MS.length ? withJitter(ROTATION_BACKOFF, retry) : retry);
        }
      }
    }
  }
}

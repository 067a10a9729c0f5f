/**
 * Pod certificates (KEP-4317), as upstream's kubelet issues them
 * (pkg/kubelet/podcertificate/podcertificatemanager.go): for each
 * `podCertificate` source of a pod's projected volume, nodelet generates a
 * key on the node, creates a PodCertificateRequest for the pod (its name and
 * UID, its service account's, the node's, the stub PKCS#10 request) and keeps
 * the credential bundle the signer issues, renewing it from the signer's
 * `beginRefreshAt` on. One record per source (pod UID, volume, source index);
 * nothing is kept across a restart of nodelet, so a restarted nodelet requests
 * every certificate anew, as upstream's does. The states and what the pod
 * gets in each are in pod-certificate-state.ts; the transitions are here:
 *
 *                                        now ≥ beginRefreshAt + jitter: create
 *                                        ┌───────────────────────────────┐
 *                                        │                               ▼
 *   initial ──create──► wait ──Issued──► fresh ◄──Issued (new key)── waitRefresh
 *      ▲                 │               ▲                            │  │  │
 *      └─────PCR gone────┤               └──────────PCR gone──────────┘  │  │
 *                        ├──Denied──► denied ◄───────────Denied──────────┘  │
 *                        └──Failed──► failed ◄───────────Failed─────────────┘
 *
 * What the pod sees: in `initial` and `wait` its volume set-up fails with
 * `credential bundle is not issued yet` (a FailedMount event; the pod starts
 * nothing and is retried), in `fresh` and `waitRefresh` the volume holds the
 * current bundle, and `denied`/`failed` are final for the pod (a `Denied` or
 * `Failed` warning event once, and every set-up fails with the signer's
 * reason and message). When a bundle is issued, denied or failed the pod's
 * volumes re-sync at once (`onChange`), so the pod starts, or its files are
 * rewritten, without waiting for the periodic re-sync.
 *
 * Each record moves one step at a time (a step never overlaps another of the
 * same record). Steps are driven by the volume's set-up (every read), by the
 * watch of this node's requests (an event for the pod) and by a pass over all
 * records every minute (refresh times, requests that vanished). A failed
 * call (the ServiceAccount read, the create) leaves the record where it was,
 * its error shown in the set-up failure, and is tried again after a back-off
 * of 20 ms doubling to 30 s (upstream's work queue retries from 5 ms; the
 * first calls for a pod just bound can be refused while the apiserver's
 * caches lag the binding), or at the next drive.
 * The request name and the times are the apiserver's: `wait` gives up on a
 * request the watch never showed 10 minutes (plus up to 5 jittered) after
 * its creation; refreshes begin at `beginRefreshAt` plus up to 5 jittered
 * minutes, so that pods do not renew in lockstep.
 */
import type { V1Pod, V1PodCertificateProjection } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import type { Events } from '../events/index.ts';
import type { PodCertificateStateCount } from '../metrics/index.ts';
import type { PodCertificateBundle, PodCertificates } from '../volumes/index.ts';
import { Backoff } from '../backoff/index.ts';
import { errorDetail, nodeletError } from '../errors/index.ts';
import type { PodCertificateApi, PodCertificateRequest, PodCertificateRequestCache } from './pod-certificate-api.ts';
import { generatePodCertificateKey, type PodCertificateKey } from './pod-certificate-keys.ts';
import { concluded, credentialBundleOf, metricsState, REFRESH_OVERDUE_MS, type CredState, type Issued, type Pending } from './pod-certificate-state.ts';

/** upstream `assumeDeletedThreshold`: a request the watch has not shown by then is taken as deleted. */
const ASSUME_DELETED_MS = 10 * 60_000;
/** upstream `jitterDuration`: up to 5 minutes. */
const JITTER_MS = 5 * 60_000;
/** upstream's refresh pass runs every minute. */
const PASS_MS = 60_000;
/** The retries of a failed step: 20 ms doubling to 30 s. */
const RETRY_FIRST_MS = 20;
const RETRY_MAX_MS = 30_000;

/** One podCertificate source of one pod. */
interface ProjectionRecord {
  readonly key: string;
  readonly namespace: string;
  readonly podName: string;
  readonly podUid: string;
  readonly serviceAccountName: string;
  readonly projection: V1PodCertificateProjection;
  state: CredState;
  /** Why the last step failed; cleared by a step that created a request. */
  lastError?: string;
  running: boolean;
  /** Another drive came while a step ran: run one more step after it. */
  again: boolean;
  /** The retry of a failed step. */
  retry?: NodeJS.Timeout;
}

/** Options of {@link PodCertificateManager}. */
export interface PodCertificateManagerOptions {
  readonly api: PodCertificateApi;
  /** This node's name (`spec.nodeName` of the requests). */
  readonly nodeName: string;
  readonly events: Events;
  readonly log: Logger;
  /** The clock (tests inject one). */
  readonly now?: () => number;
  /** In [0, 1): the jitter of refresh and abandon times (tests inject one). */
  readonly random?: () => number;
  readonly generateKey?: (keyType: string) => Promise<PodCertificateKey>;
}

/** The pod certificate manager (see the module comment); pod set-up reads it as {@link PodCertificates}. */
export class PodCertificateManager implements PodCertificates {
  private readonly records = new Map<string, ProjectionRecord>();
  /** When each pod's bundles last changed state (issued, denied, failed). */
  private readonly changedAt = new Map<string, number>();
  private readonly listeners: ((podUids: string[]) => void)[] = [];
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly generateKey: (keyType: string) => Promise<PodCertificateKey>;
  private readonly retries = new Backoff(RETRY_FIRST_MS, RETRY_MAX_MS);
  private cache?: PodCertificateRequestCache;
  private pass?: NodeJS.Timeout;
  private nodeUid?: string;
  private stopped = false;

  constructor(private readonly o: PodCertificateManagerOptions) {
    this.now = o.now ?? Date.now;
    this.random = o.random ?? Math.random;
    this.generateKey = o.generateKey ?? generatePodCertificateKey;
  }

  credentialBundle(pod: V1Pod, volumeName: string, sourceIndex: number): PodCertificateBundle {
    const rec = this.recordFor(pod, volumeName, sourceIndex);
    this.drive(rec);
    return credentialBundleOf(rec.state, { namespace: rec.namespace, signerName: rec.projection.signerName, lastError: rec.lastError });
  }

  /** The sources by signer and state, as upstream's `MetricReport` (`kubelet_podcertificate_states`). */
  metricReport(): PodCertificateStateCount[] {
    const now = this.now();
    const counts = new Map<string, PodCertificateStateCount>();
    for (const rec of this.records.values()) {
      const state = metricsState(rec.state, now);
      const key = JSON.stringify([rec.projection.signerName, state]);
      const c = counts.get(key);
      counts.set(key, { signerName: rec.projection.signerName, state, count: (c?.count ?? 0) + 1 });
    }
    return [...counts.values()];
  }

  changedSince(podUid: string, since: number): boolean {
    return (this.changedAt.get(podUid) ?? -Infinity) >= since;
  }

  onChange(fn: (podUids: string[]) => void): void {
    this.listeners.push(fn);
  }

  forgetPod(podUid: string): void {
    for (const [k, r] of this.records) {
      if (r.podUid !== podUid) continue;
      clearTimeout(r.retry);
      this.retries.reset(k);
      this.records.delete(k);
    }
    this.changedAt.delete(podUid);
    if (this.records.size === 0) this.idle();
  }

  /** Stops the watch and the pass; records stay readable. */
  stop(): void {
    this.stopped = true;
    for (const r of this.records.values()) clearTimeout(r.retry);
    this.idle();
  }

  /** The record of the source, made (and the watch and pass started) on first sight. */
  private recordFor(pod: V1Pod, volumeName: string, sourceIndex: number): ProjectionRecord {
    const m = pod.metadata ?? {};
    const key = `${m.uid}/${volumeName}/${sourceIndex}`;
    const known = this.records.get(key);
    if (known) return known;
    const projection = pod.spec?.volumes?.find((v) => v.name === volumeName)?.projected?.sources?.[sourceIndex]?.podCertificate;
    if (!projection) throw nodeletError('NDL_POD_CERTIFICATE', `volume ${JSON.stringify(volumeName)} has no podCertificate source at index ${sourceIndex}`);
    const rec: ProjectionRecord = {
      key,
      namespace: m.namespace ?? '',
      podName: m.name ?? '',
      podUid: m.uid ?? '',
      serviceAccountName: pod.spec?.serviceAccountName ?? '',
      projection,
      state: { kind: 'initial' },
      running: false,
      again: false,
    };
    this.records.set(key, rec);
    if (!this.stopped) {
      this.cache ??= this.o.api.watch((r) => this.requestChanged(r));
      this.pass ??= setInterval(() => this.records.forEach((r) => this.drive(r)), PASS_MS).unref();
    }
    return rec;
  }

  private idle(): void {
    this.cache?.stop();
    this.cache = undefined;
    clearInterval(this.pass);
    this.pass = undefined;
  }

  private requestChanged(r: PodCertificateRequest): void {
    for (const rec of this.records.values()) if (rec.podUid === r.spec?.podUID) this.drive(rec);
  }

  /** Runs steps of `rec` until none is asked for; one at a time per record. */
  private drive(rec: ProjectionRecord): void {
    if (this.stopped || this.records.get(rec.key) !== rec) return;
    if (rec.running) {
      rec.again = true;
      return;
    }
    rec.running = true;
    void (async () => {
      try {
        do {
          rec.again = false;
          await this.step(rec);
        } while (rec.again && !this.stopped && this.records.get(rec.key) === rec);
      } finally {
        rec.running = false;
      }
    })();
  }

  /** One transition of the state machine; never rejects (a failure is kept as `lastError`). */
  private async step(rec: ProjectionRecord): Promise<void> {
    const s = rec.state;
    try {
      switch (s.kind) {
        case 'initial': {
          const wait = await this.createRequest(rec);
          rec.state = { kind: 'wait', ...wait };
          rec.again = true; // the watch may have seen it already
          return;
        }
        case 'wait': {
          const pcr = this.cache?.get(rec.namespace, s.pcrName);
          if (!pcr) {
            if (this.now() > s.abandonAt) {
              rec.state = { kind: 'initial' };
              rec.lastError = `PodCertificateRequest ${rec.namespace}/${s.pcrName} appears to have been deleted`;
              rec.again = true;
              this.o.log.warn({ pod: `${rec.namespace}/${rec.podName}`, pcr: s.pcrName }, 'PodCertificateRequest vanished; creating another');
            }
            return;
          }
          this.settle(rec, pcr, s);
          return;
        }
        case 'fresh': {
          if (this.now() < s.issued.beginRefreshAt) return;
          this.reportAge(rec, s.issued);
          const refresh = await this.createRequest(rec);
          rec.state = { kind: 'waitRefresh', issued: s.issued, refresh };
          rec.again = true;
          return;
        }
        case 'waitRefresh': {
          const pcr = this.cache?.get(rec.namespace, s.refresh.pcrName);
          if (!pcr) {
            if (this.now() > s.refresh.abandonAt) {
              rec.state = { kind: 'fresh', issued: s.issued };
              rec.lastError = `PodCertificateRequest ${rec.namespace}/${s.refresh.pcrName} appears to have been deleted`;
              rec.again = true;
            }
            return;
          }
          if (!this.settle(rec, pcr, s.refresh)) this.reportAge(rec, s.issued);
          return;
        }
        case 'denied':
        case 'failed':
          return;
      }
    } catch (e) {
      rec.lastError = errorDetail(e);
      const retryInMs = this.retries.next(rec.key);
      this.o.log.warn({ pod: `${rec.namespace}/${rec.podName}`, state: s.kind, err: rec.lastError, retryInMs }, 'pod certificate step failed');
      clearTimeout(rec.retry);
      rec.retry = setTimeout(() => this.drive(rec), retryInMs).unref();
    }
  }

  /** Moves `rec` on when `pcr` (the request of `pending`) reached Issued, Denied or Failed; true if it did. */
  private settle(rec: ProjectionRecord, pcr: PodCertificateRequest, pending: Pending): boolean {
    const next = concluded(pcr, pending, this.jitter());
    if (!next) return false;
    if ('error' in next) {
      rec.lastError = next.error;
      return false;
    }
    rec.state = next;
    const name = `${rec.namespace}/${pending.pcrName}`;
    if (next.kind === 'fresh') {
      rec.lastError = undefined;
      this.o.log.info({ pod: `${rec.namespace}/${rec.podName}`, pcr: pending.pcrName, notAfter: pcr.status?.notAfter }, 'pod certificate issued');
    } else {
      const regarding = { kind: 'Pod', namespace: rec.namespace, name: rec.podName, uid: rec.podUid };
      const what = next.kind === 'denied' ? 'was denied' : 'failed';
      const note = `PodCertificateRequest ${name} ${what}, reason=${JSON.stringify(next.reason)}, message=${JSON.stringify(next.message)}`;
      this.o.events.emit(regarding, 'Warning', next.kind === 'denied' ? 'Denied' : 'Failed', note);
    }
    this.changed(rec);
    return true;
  }

  /** Warns once when the refresh is overdue, and once when the bundle the pod holds expired. */
  private reportAge(rec: ProjectionRecord, issued: Issued): void {
    const now = this.now();
    const regarding = { kind: 'Pod', namespace: rec.namespace, name: rec.podName, uid: rec.podUid };
    if (now > issued.beginRefreshAt + REFRESH_OVERDUE_MS && !issued.overdueReported) {
      issued.overdueReported = true;
      this.o.events.emit(regarding, 'Warning', 'CertificateOverdueForRefresh', 'PodCertificate refresh overdue');
    }
    if (now > issued.notAfter && !issued.expiredReported) {
      issued.expiredReported = true;
      this.o.events.emit(regarding, 'Warning', 'CertificateExpired', 'PodCertificate expired');
    }
  }

  /** Generates a key and creates the request for it (upstream `createPodCertificateRequest`). */
  private async createRequest(rec: ProjectionRecord): Promise<Pending> {
    const p = rec.projection;
    const serviceAccountUID = await this.o.api.serviceAccountUid(rec.namespace, rec.serviceAccountName);
    this.nodeUid ??= await this.o.api.nodeUid();
    const key = await this.generateKey(p.keyType);
    let made: PodCertificateRequest;
    try {
      made = await this.o.api.create({
        metadata: {
          namespace: rec.namespace,
          generateName: 'req-',
          ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: rec.podName, uid: rec.podUid }],
        },
        spec: {
          signerName: p.signerName,
          podName: rec.podName,
          podUID: rec.podUid,
          serviceAccountName: rec.serviceAccountName,
          serviceAccountUID,
          nodeName: this.o.nodeName,
          nodeUID: this.nodeUid,
          ...(p.maxExpirationSeconds !== undefined ? { maxExpirationSeconds: p.maxExpirationSeconds } : {}),
          stubPKCS10Request: key.stubCsrDer.toString('base64'),
          ...(p.userAnnotations ? { unverifiedUserAnnotations: p.userAnnotations } : {}),
        },
      });
    } catch (e) {
      // A re-registered node has a new UID: read it again next time.
      this.nodeUid = undefined;
      throw e;
    }
    const name = made.metadata.name ?? '';
    const created = Date.parse(made.metadata.creationTimestamp ?? '');
    rec.lastError = undefined;
    this.retries.reset(rec.key);
    this.o.log.debug({ pod: `${rec.namespace}/${rec.podName}`, pcr: name, signer: p.signerName }, 'PodCertificateRequest created');
    return {
      privateKey: Buffer.from(key.privateKeyPem),
      pcrName: name,
      abandonAt: (Number.isNaN(created) ? this.now() : created) + ASSUME_DELETED_MS + this.jitter(),
    };
  }

  private jitter(): number {
    return Math.floor(this.random() * JITTER_MS);
  }

  private changed(rec: ProjectionRecord): void {
    this.changedAt.set(rec.podUid, this.now());
    for (const fn of this.listeners) fn([rec.podUid]);
  }
}

/**
 * The node Lease in `kube-node-lease`, renewed as upstream's lease controller
 * (k8s.io/component-helpers/apimachinery/lease) does: duration 40 s, renewed every
 * duration/4 = 10 s with 4% jitter, the wait counted from the end of a sync.
 *
 *   start ─► sync ─► wait ~10 s ─► sync ─► …
 *
 *   sync:  known Lease? ──yes──► update, up to 5 times at once ──ok──► done
 *               │ no                 (a conflict re-reads it first)
 *               │                          │ 5 failed
 *               ▼                          ▼
 *          ensure: GET (404 → CREATE), again after 200 ms doubling to 7 s until it works
 *               │ it existed                        │ created
 *               ▼                                   ▼
 *          update, up to 5 times (failure logged)   done
 *
 * Give the controller clients whose requests time out (the heartbeat clients,
 * `ApiTransport.withTimeout`): a request that never ends would hold the sync,
 * and the Lease would expire behind it.
 */
import type { V1Lease } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import { nextDelay, type BackoffPolicy } from '../backoff/index.ts';
import { nodeletError } from '../errors/index.ts';
import { type KubeClients, isApiConflict, isApiNotFound, apiMessage, MicroTime } from '../kube/index.ts';

const NAMESPACE = 'kube-node-lease';
/** Immediate, successive tries of an update (upstream's maxUpdateRetries). */
const LEASE_UPDATE_TRIES = 5;
/** The ensure back-off: upstream sleeps 100 ms doubled before its first wait, up to its maxBackoff. */
const ENSURE_BACKOFF: BackoffPolicy = { initialMs: 200, maxMs: 7000 };

/**
 * The timeout of the heartbeat requests (node status and Lease), as upstream's kubelet
 * sets it: `nodeStatusUpdateFrequency`, at most the lease duration (10 s by default).
 */
export function heartbeatTimeoutMs(nodeStatusUpdateFrequencyMs: number, leaseDurationSeconds: number): number {
  return Math.min(nodeStatusUpdateFrequencyMs, leaseDurationSeconds * 1000);
}

/** Options of the lease controller. */
export interface LeaseOptions {
  nodeName: string;
  nodeUID?: string;
  durationSeconds: number;
  log: Logger;
}

/** Keeps the node's Lease renewed until stopped. */
export class LeaseController {
  private timer?: NodeJS.Timeout;
  private wake?: () => void;
  private lease?: V1Lease;
  private stopped = false;

  constructor(
    private readonly clients: KubeClients,
    private readonly o: LeaseOptions,
  ) {}

  /** Starts renewing; the first renewal happens at once. */
  start(): void {
    void this.loop();
  }

  /** Stops renewing (the Lease object stays, as upstream). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.wake?.();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      await this.sync();
      await this.sleep(this.renewIntervalMs());
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.stopped) return resolve();
      this.wake = resolve;
      this.timer = setTimeout(resolve, ms);
    });
  }

  private renewIntervalMs(): number {
    const base = (this.o.durationSeconds * 1000) / 4;
    return base + Math.random() * base * 0.04;
  }

  private async sync(): Promise<void> {
    if (this.lease) {
      try {
        await this.retryUpdate(this.lease);
        return;
      } catch (e) {
        this.o.log.info({ err: apiMessage(e) }, 'failed to update lease using latest lease, fallback to ensure lease');
      }
    }
    const ensured = await this.backoffEnsure();
    if (!ensured) return; // stopped
    this.lease = ensured.lease;
    if (ensured.created) return;
    try {
      await this.retryUpdate(ensured.lease);
    } catch (e) {
      this.o.log.error({ err: apiMessage(e) }, 'will retry updating lease');
    }
  }

  /** Updates the Lease from `base`, up to {@link LEASE_UPDATE_TRIES} times at once; a conflict re-reads it first. */
  private async retryUpdate(base: V1Lease): Promise<void> {
    let last: unknown;
    for (let i = 0; i < LEASE_UPDATE_TRIES && !this.stopped; i++) {
      const body: V1Lease = { ...base, spec: { ...base.spec, ...this.spec() } };
      try {
        this.lease = await this.clients.coordination.replaceNamespacedLease({ name: this.o.nodeName, namespace: NAMESPACE, body });
        return;
      } catch (e) {
        last = e;
        this.o.log.error({ err: apiMessage(e) }, 'failed to update lease');
        if (isApiConflict(e)) {
          const ensured = await this.backoffEnsure();
          if (!ensured) break;
          base = ensured.lease;
        }
      }
    }
    throw nodeletError('NDL_API_REQUEST', `failed ${LEASE_UPDATE_TRIES} attempts to update lease: ${apiMessage(last)}`);
  }

  /** Reads the Lease or creates it, retrying with back-off until it works; undefined when stopped. */
  private async backoffEnsure(): Promise<{ lease: V1Lease; created: boolean } | undefined> {
    let wait: number | undefined;
    while (!this.stopped) {
      try {
        return await this.ensure();
      } catch (e) {
        wait = nextDelay(ENSURE_BACKOFF, wait);
        this.o.log.warn({ err: apiMessage(e), retryMs: wait }, 'failed to ensure node lease exists, will retry');
        await this.sleep(wait);
      }
    }
    return undefined;
  }

  private async ensure(): Promise<{ lease: V1Lease; created: boolean }> {
    const api = this.clients.coordination;
    try {
      return { lease: await api.readNamespacedLease({ name: this.o.nodeName, namespace: NAMESPACE }), created: false };
    } catch (e) {
      if (!isApiNotFound(e)) throw e;
    }
    return { lease: await api.createNamespacedLease({ namespace: NAMESPACE, body: this.newLease() }), created: true };
  }

  private spec(): V1Lease['spec'] {
    return { holderIdentity: this.o.nodeName, leaseDurationSeconds: this.o.durationSeconds, renewTime: new MicroTime() };
  }

  private newLease(): V1Lease {
    const ownerReferences = this.o.nodeUID ? [{ apiVersion: 'v1', kind: 'Node', name: this.o.nodeName, uid: this.o.nodeUID }] : undefined;
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.o.nodeName, namespace: NAMESPACE, ownerReferences },
      spec: this.spec(),
    };
  }
}

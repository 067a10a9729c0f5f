/**
 * The node Lease in `kube-node-lease` (upstream component-helpers lease controller):
 * duration 40 s, renewed every duration/4 = 10 s with 4% jitter; creation is
 * retried with back-off 100 ms doubling to 7 s.
 */
import type { V1Lease } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import { type KubeClients, isApiConflict, isApiNotFound, apiMessage, MicroTime } from '../kube/index.ts';
import { Backoff } from '../backoff/index.ts';

const NAMESPACE = 'kube-node-lease';

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
  private lease?: V1Lease;
  private stopped = false;
  /** 100 ms doubling to 7 s, from the start again after a success. */
  private readonly backoff = new Backoff(100, 7000, Date.now, { resetAfterMs: Infinity });

  constructor(
    private readonly clients: KubeClients,
    private readonly o: LeaseOptions,
  ) {}

  /** Starts renewing; the first renewal happens at once. */
  start(): void {
    void this.tick();
  }

  /** Stops renewing (the Lease object stays, as upstream). */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(ms: number): void {
    if (!this.stopped) this.timer = setTimeout(() => void this.tick(), ms);
  }

  private renewIntervalMs(): number {
    const base = (this.o.durationSeconds * 1000) / 4;
    return base + Math.random() * base * 0.04;
  }

  private async tick(): Promise<void> {
    try {
      await this.renew();
      this.backoff.reset('lease');
      this.schedule(this.renewIntervalMs());
    } catch (e) {
      this.o.log.warn({ err: apiMessage(e) }, 'failed to ensure node lease exists, will retry');
      this.lease = undefined;
      this.schedule(this.backoff.next('lease'));
    }
  }

  private spec(): V1Lease['spec'] {
    return { holderIdentity: this.o.nodeName, leaseDurationSeconds: this.o.durationSeconds, renewTime: new MicroTime() };
  }

  private async renew(): Promise<void> {
    const api = this.clients.coordination;
    if (!this.lease) {
      try {
        this.lease = await api.readNamespacedLease({ name: this.o.nodeName, namespace: NAMESPACE });
      } catch (e) {
        if (!isApiNotFound(e)) throw e;
        this.lease = await api.createNamespacedLease({ namespace: NAMESPACE, body: this.newLease() });
        return;
      }
    }
    const body: V1Lease = { ...this.lease, spec: { ...this.lease.spec, ...this.spec() } };
    try {
      this.lease = await api.replaceNamespacedLease({ name: this.o.nodeName, namespace: NAMESPACE, body });
    } catch (e) {
      if (isApiConflict(e) || isApiNotFound(e)) this.lease = undefined;
      throw e;
    }
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

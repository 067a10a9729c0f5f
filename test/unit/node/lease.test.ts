import { afterEach, describe, expect, it, vi } from 'vitest';
import type { V1Lease } from '@kubernetes/client-node';
import type { KubeClients } from '../../../core/kube/client.ts';
import { LeaseController } from '../../../core/node/lease.ts';
import { memoryLogger } from '../pods/fakes.ts';

const apiError = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code });

/** A coordination.k8s.io API holding at most one Lease, with resourceVersion checks like the apiserver. */
class FakeCoordination {
  lease?: V1Lease;
  rv = 0;
  calls: string[] = [];
  replaced: V1Lease[] = [];
  created: V1Lease[] = [];
  /** Errors to throw from the next calls, by verb. */
  fail: Record<string, Error[]> = { read: [], create: [], replace: [] };

  private check(verb: string): void {
    this.calls.push(verb);
    const e = this.fail[verb]!.shift();
    if (e) throw e;
  }

  async readNamespacedLease({ name, namespace }: { name: string; namespace: string }): Promise<V1Lease> {
    this.check('read');
    if (!this.lease || this.lease.metadata!.name !== name || namespace !== 'kube-node-lease') throw apiError(404);
    return structuredClone(this.lease);
  }

  async createNamespacedLease({ namespace, body }: { namespace: string; body: V1Lease }): Promise<V1Lease> {
    this.check('create');
    if (this.lease) throw apiError(409);
    this.created.push(structuredClone(body));
    this.lease = { ...structuredClone(body), metadata: { ...body.metadata, namespace, resourceVersion: String(++this.rv) } };
    return structuredClone(this.lease);
  }

  async replaceNamespacedLease({ body }: { name: string; namespace: string; body: V1Lease }): Promise<V1Lease> {
    this.check('replace');
    if (!this.lease) throw apiError(404);
    if (body.metadata?.resourceVersion !== this.lease.metadata!.resourceVersion) throw apiError(409);
    this.replaced.push(structuredClone(body));
    this.lease = { ...structuredClone(body), metadata: { ...body.metadata, resourceVersion: String(++this.rv) } };
    return structuredClone(this.lease);
  }

  /** Someone else updated the Lease (bumps resourceVersion). */
  touch(): void {
    this.lease!.metadata!.resourceVersion = String(++this.rv);
  }
}

const controllers: LeaseController[] = [];
afterEach(() => {
  controllers.splice(0).forEach((c) => c.stop());
  vi.useRealTimers();
  vi.restoreAllMocks();
});

function make(nodeUID?: string) {
  const api = new FakeCoordination();
  const lease = new LeaseController({ coordination: api } as unknown as KubeClients, { nodeName: 'node-a', nodeUID, durationSeconds: 40, log: memoryLogger() });
  controllers.push(lease);
  return { api, lease };
}

describe('LeaseController', () => {
  it('creates the Lease when missing, owned by the Node, then renews it by replace every ~10 s', async () => {
    vi.useFakeTimers({ now: new Date('2024-01-01T00:00:00Z') });
    const { api, lease } = make('node-uid-1');
    lease.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(api.calls).toEqual(['read', 'create']);
    expect(api.created[0]).toMatchObject({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'node-a', namespace: 'kube-node-lease', ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: 'node-uid-1' }] },
      spec: { holderIdentity: 'node-a', leaseDurationSeconds: 40 },
    });
    await vi.advanceTimersByTimeAsync(9_999);
    expect(api.calls).toEqual(['read', 'create']);
    await vi.advanceTimersByTimeAsync(401);
    expect(api.calls).toEqual(['read', 'create', 'replace']);
    const renewed = api.replaced[0]!;
    expect(renewed.metadata!.resourceVersion).toBe('1');
    expect(renewed.spec).toMatchObject({ holderIdentity: 'node-a', leaseDurationSeconds: 40 });
    expect(new Date(renewed.spec!.renewTime as unknown as string).getTime()).toBeGreaterThanOrEqual(new Date('2024-01-01T00:00:10Z').getTime());
    await vi.advanceTimersByTimeAsync(10_400);
    expect(api.calls).toEqual(['read', 'create', 'replace', 'replace']);
    expect(api.replaced[1]!.metadata!.resourceVersion).toBe('2');
  });

  it('renews an existing Lease without creating one', async () => {
    vi.useFakeTimers();
    const { api, lease } = make();
    api.lease = { metadata: { name: 'node-a', namespace: 'kube-node-lease', resourceVersion: '7' }, spec: { holderIdentity: 'node-a' } };
    api.rv = 7;
    lease.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(api.calls).toEqual(['read', 'replace']);
    expect(api.created).toEqual([]);
  });

  it('on a conflict re-reads the Lease at once and renews the fresh copy', async () => {
    vi.useFakeTimers();
    vi.spyOn(Math, 'random').mockReturnValue(0); // no jitter: renew at exactly 10 s
    const { api, lease } = make();
    lease.start();
    await vi.advanceTimersByTimeAsync(0);
    api.touch();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(api.calls.slice(2)).toEqual(['replace', 'read', 'replace']);
    expect(api.replaced.at(-1)!.metadata!.resourceVersion).toBe('2');
  });

  it('retries a failed update at once, up to 5 times, then reads the Lease again and updates it', async () => {
    vi.useFakeTimers();
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const { api, lease } = make();
    lease.start();
    await vi.advanceTimersByTimeAsync(0);
    // One failure (e.g. a request that timed out): the next try follows at once.
    api.fail.replace = [apiError(500)];
    await vi.advanceTimersByTimeAsync(10_000);
    expect(api.calls.slice(2)).toEqual(['replace', 'replace']);
    expect(api.replaced).toHaveLength(1);
    // Five failures: the sixth request is a read (ensure), then an update of what it read.
    api.fail.replace = Array.from({ length: 5 }, () => apiError(503));
    await vi.advanceTimersByTimeAsync(10_000);
    expect(api.calls.slice(4)).toEqual(['replace', 'replace', 'replace', 'replace', 'replace', 'read', 'replace']);
    expect(api.replaced).toHaveLength(2);
    // The next renewal counts its 10 s from the end of that sync.
    await vi.advanceTimersByTimeAsync(9_999);
    expect(api.calls).toHaveLength(11);
    await vi.advanceTimersByTimeAsync(1);
    expect(api.calls.slice(11)).toEqual(['replace']);
  });

  it('reads or creates the Lease with back-off 200 ms doubling to 7 s until it works', async () => {
    vi.useFakeTimers();
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const { api, lease } = make();
    api.fail.read = Array.from({ length: 9 }, () => apiError(500));
    const times: number[] = [];
    const t0 = Date.now();
    const read = api.readNamespacedLease.bind(api);
    api.readNamespacedLease = async (a) => {
      times.push(Date.now() - t0);
      return read(a);
    };
    lease.start();
    await vi.advanceTimersByTimeAsync(40_000);
    expect(times.slice(0, 10)).toEqual([0, 200, 600, 1400, 3000, 6200, 12_600, 19_600, 26_600, 33_600]);
    expect(api.calls.slice(10, 12)).toEqual(['create']);
    // A later failure to read starts the back-off again at 200 ms.
    api.fail.replace = Array.from({ length: 5 }, () => apiError(500));
    api.fail.read = [apiError(500)];
    const before = times.length;
    await vi.advanceTimersByTimeAsync(3_600); // created at 33.6 s: renewed at 43.6 s
    expect(api.calls.slice(-6)).toEqual(['replace', 'replace', 'replace', 'replace', 'replace', 'read']);
    expect(times.length).toBe(before + 1);
    await vi.advanceTimersByTimeAsync(199);
    expect(times.length).toBe(before + 1);
    await vi.advanceTimersByTimeAsync(1);
    expect(times.length).toBe(before + 2);
    expect(api.calls.slice(-2)).toEqual(['read', 'replace']);
  });

  it('stops renewing when stopped', async () => {
    vi.useFakeTimers();
    const { api, lease } = make();
    lease.start();
    await vi.advanceTimersByTimeAsync(0);
    lease.stop();
    await vi.advanceTimersByTimeAsync(120_000);
    expect(api.calls).toEqual(['read', 'create']);
  });
});

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

  it('on a conflict re-reads the Lease and renews the fresh copy', async () => {
    vi.useFakeTimers();
    vi.spyOn(Math, 'random').mockReturnValue(0); // no jitter: renew at exactly 10 s
    const { api, lease } = make();
    lease.start();
    await vi.advanceTimersByTimeAsync(0);
    api.touch();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(api.calls.slice(2)).toEqual(['replace']);
    await vi.advanceTimersByTimeAsync(100);
    expect(api.calls.slice(2)).toEqual(['replace', 'read', 'replace']);
    expect(api.replaced.at(-1)!.metadata!.resourceVersion).toBe('2');
  });

  it('backs off 100 ms doubling to 7 s on errors and resets after a success', async () => {
    vi.useFakeTimers();
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
    await vi.advanceTimersByTimeAsync(30_000);
    expect(times.slice(0, 10)).toEqual([0, 100, 300, 700, 1500, 3100, 6300, 12_700, 19_700, 26_700]);
    expect(api.calls.slice(10, 12)).toEqual(['create']);
    // After the success the next failure starts again at 100 ms.
    api.fail.replace = [apiError(500)];
    const before = times.length;
    await vi.advanceTimersByTimeAsync(10_400);
    await vi.advanceTimersByTimeAsync(100);
    expect(times.length).toBe(before + 1);
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

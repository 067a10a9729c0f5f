import { describe, expect, it, vi } from 'vitest';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { apiObjectWatch } from '../../../core/volumes/api-object-watch.ts';
import type { KubeClients } from '../../../core/kube/client.ts';
import { memoryLogger } from '../pods/fakes.ts';

/** A fake API whose LIST answers at once and whose watch opens only when `open()` is called. */
function fakeClients() {
  const cm: V1ConfigMap = { metadata: { name: 'kube-root-ca.crt', namespace: 'team', resourceVersion: '7' }, data: { 'ca.crt': 'CA' } };
  const state = { lists: 0, watches: 0, open: undefined as (() => void) | undefined };
  const clients = {
    core: {
      listNamespacedConfigMap: async () => {
        state.lists++;
        return { items: [cm], metadata: { resourceVersion: '7' } };
      },
    },
    transport: {
      watch: (_path: string, _query: unknown) => {
        state.watches++;
        return new Promise<AbortController>((resolve) => (state.open = () => resolve(new AbortController())));
      },
    },
  } as unknown as Pick<KubeClients, 'transport' | 'core'>;
  return { clients, state };
}

describe('apiObjectWatch', () => {
  it('serves reads once the list is cached, without waiting for the watch to open', async () => {
    const { clients, state } = fakeClients();
    const w = apiObjectWatch(clients, memoryLogger([]))('configmaps', 'team', 'kube-root-ca.crt', () => undefined);
    try {
      await w.synced; // the watch is still not open: without the list-time sync this never resolves
      expect(state.lists).toBe(1);
      expect(state.watches).toBe(1);
      expect((w.current() as V1ConfigMap).data).toEqual({ 'ca.crt': 'CA' });
    } finally {
      state.open?.();
      w.stop();
    }
  });

  it('keeps serving the first list when the watch after it fails with 410 and the relist hangs', async () => {
    const cm: V1ConfigMap = { metadata: { name: 'kube-root-ca.crt', namespace: 'team', resourceVersion: '7' }, data: { 'ca.crt': 'CA' } };
    let lists = 0;
    const clients = {
      core: {
        listNamespacedConfigMap: () => (++lists === 1 ? Promise.resolve({ items: [cm], metadata: { resourceVersion: '7' } }) : new Promise(() => undefined)),
      },
      transport: {
        watch: (_p: string, _q: unknown, _on: unknown, done: (e: unknown) => void) => {
          queueMicrotask(() => done(Object.assign(new Error('Gone'), { httpStatus: 410 })));
          return Promise.resolve(new AbortController());
        },
      },
    } as unknown as Pick<KubeClients, 'transport' | 'core'>;
    const w = apiObjectWatch(clients, memoryLogger([]))('configmaps', 'team', 'kube-root-ca.crt', () => undefined);
    try {
      await w.synced;
      expect(lists).toBe(2); // relisting, not answered
      expect((w.current() as V1ConfigMap).data).toEqual({ 'ca.crt': 'CA' });
    } finally {
      w.stop();
    }
  });

  it('retries a first list the Node authorizer refused after 20 ms, doubling, not after a second', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    const cm: V1ConfigMap = { metadata: { name: 'kube-root-ca.crt', namespace: 'team', resourceVersion: '7' }, data: { 'ca.crt': 'CA' } };
    let lists = 0;
    const forbidden = Object.assign(new Error('configmaps "kube-root-ca.crt" is forbidden: no relationship found between node and this object'), {
      httpStatus: 403,
    });
    const clients = {
      core: {
        listNamespacedConfigMap: async () => {
          if (++lists <= 3) throw forbidden; // the authorizer's graph has not seen the pod yet
          return { items: [cm], metadata: { resourceVersion: '7' } };
        },
      },
      transport: { watch: () => new Promise<AbortController>(() => undefined) },
    } as unknown as Pick<KubeClients, 'transport' | 'core'>;
    const w = apiObjectWatch(clients, memoryLogger([]))('configmaps', 'team', 'kube-root-ca.crt', () => undefined);
    try {
      await vi.advanceTimersByTimeAsync(0);
      expect(lists).toBe(1);
      for (const [wait, after] of [
        [20, 2],
        [40, 3],
        [80, 4],
      ] as const) {
        await vi.advanceTimersByTimeAsync(wait - 1);
        expect(lists).toBe(after - 1);
        await vi.advanceTimersByTimeAsync(1);
        expect(lists).toBe(after);
      }
      vi.useRealTimers();
      await w.synced;
      expect((w.current() as V1ConfigMap).data).toEqual({ 'ca.crt': 'CA' });
    } finally {
      vi.useRealTimers();
      w.stop();
    }
  });
});

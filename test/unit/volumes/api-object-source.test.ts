import type { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { createApiObjectSource } from '../../../core/volumes/api-object-source.ts';
import { statusError } from '../../../core/kube/api-transport.ts';

class FakeApiError extends Error {
  constructor(readonly code: number) {
    super(`HTTP ${code}`);
  }
}

describe('createApiObjectSource', () => {
  const calls: unknown[] = [];
  const api = {
    async readNamespacedConfigMap(p: { name: string; namespace: string }) {
      calls.push(['cm', p]);
      if (p.name === 'missing') throw new FakeApiError(404);
      if (p.name === 'forbidden') throw new FakeApiError(403);
      return { metadata: { name: p.name }, data: { k: 'v' } };
    },
    async readNamespacedSecret(p: { name: string; namespace: string }) {
      calls.push(['secret', p]);
      throw new FakeApiError(404);
    },
    async createNamespacedServiceAccountToken(p: unknown) {
      calls.push(['token', p]);
      return { spec: { audiences: [] }, status: { token: 'jwt', expirationTimestamp: new Date('2030-01-01T00:00:00Z') } };
    },
  } as unknown as CoreV1Api;
  const src = createApiObjectSource(api);

  it('maps 404 to undefined and passes other errors through', async () => {
    expect((await src.getConfigMap('ns', 'c'))?.data).toEqual({ k: 'v' });
    expect(await src.getConfigMap('ns', 'missing')).toBeUndefined();
    expect(await src.getSecret('ns', 's')).toBeUndefined();
    await expect(src.getConfigMap('ns', 'forbidden')).rejects.toMatchObject({ code: 'NDL_API_REQUEST', httpStatus: 403 });
    expect(calls[0]).toEqual(['cm', { name: 'c', namespace: 'ns' }]);
  });

  it('sends a pod-bound TokenRequest', async () => {
    const t = await src.requestServiceAccountToken('ns', 'sa', { audience: 'vault', expirationSeconds: 600, podName: 'p', podUID: 'u' });
    expect(t).toEqual({ token: 'jwt', expirationTimestamp: new Date('2030-01-01T00:00:00Z') });
    expect(calls.at(-1)).toEqual([
      'token',
      {
        name: 'sa',
        namespace: 'ns',
        body: {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: { audiences: ['vault'], expirationSeconds: 600, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u' } },
        },
      },
    ]);
  });
});

describe('createApiObjectSource errors', () => {
  it('turns an API error into NDL_API_REQUEST with the apiserver Status message as detail, keeping its HTTP status', async () => {
    const body = JSON.stringify({
      kind: 'Status',
      message: 'serviceaccounts "default" is forbidden: node requested token not bound to a pod',
      code: 403,
    });
    const fail = async () => {
      throw Object.assign(new Error(`HTTP-Code: 403\nMessage: Unknown API Status Code!\nBody: ${body}`), { code: 403, body });
    };
    const src = createApiObjectSource({ createNamespacedServiceAccountToken: fail, readNamespacedSecret: fail } as unknown as CoreV1Api);
    const opts = { expirationSeconds: 3600, podName: 'p', podUID: 'u' };
    await expect(src.requestServiceAccountToken('ns', 'default', opts)).rejects.toMatchObject({
      code: 'NDL_API_REQUEST',
      detail: 'serviceaccounts "default" is forbidden: node requested token not bound to a pod',
      httpStatus: 403,
    });
    await expect(src.getSecret('ns', 's')).rejects.toMatchObject({ httpStatus: 403, message: expect.not.stringContaining('HTTP-Code') });
  });
});

describe('createApiObjectSource and the apiserver lagging a binding', () => {
  it('asks for a token again when NodeRestriction has not yet seen the pod bound here, and reads through the lag', async () => {
    const lag = statusError(
      403,
      JSON.stringify({
        kind: 'Status',
        message: 'serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node',
        code: 403,
      }),
    );
    const graph = statusError(
      403,
      JSON.stringify({
        kind: 'Status',
        message: 'configmaps "kube-root-ca.crt" is forbidden: no relationship found between node \'n1\' and this object',
        code: 403,
      }),
    );
    let tokenAsks = 0;
    let cmReads = 0;
    const api = {
      async createNamespacedServiceAccountToken() {
        if (++tokenAsks === 1) throw lag;
        return { status: { token: 'jwt', expirationTimestamp: new Date('2030-01-01T00:00:00Z') } };
      },
      async readNamespacedConfigMap() {
        if (++cmReads <= 2) throw graph;
        return { metadata: { name: 'kube-root-ca.crt' }, data: { 'ca.crt': 'CA' } };
      },
    } as unknown as CoreV1Api;
    const src = createApiObjectSource(api);
    await expect(src.requestServiceAccountToken('ns', 'default', { expirationSeconds: 3600, podName: 'p', podUID: 'u' })).resolves.toMatchObject({
      token: 'jwt',
    });
    expect(tokenAsks).toBe(2);
    expect((await src.getConfigMap('ns', 'kube-root-ca.crt'))?.data).toEqual({ 'ca.crt': 'CA' });
    expect(cmReads).toBe(3);
  });
});

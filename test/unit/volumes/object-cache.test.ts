import { describe, expect, it } from 'vitest';
import type { ObjectSource } from '../../../core/volumes/object-source.ts';
import { withObjectCache } from '../../../core/volumes/object-cache.ts';

function counting(): { source: ObjectSource; reads: string[] } {
  const reads: string[] = [];
  let fail = false;
  const source: ObjectSource = {
    getConfigMap: async (ns, name) => {
      reads.push(`cm ${ns}/${name}`);
      if (name === 'flaky' && (fail = !fail)) throw new Error('boom');
      return name === 'missing' ? undefined : { data: { k: name } };
    },
    getSecret: async (ns, name) => {
      reads.push(`secret ${ns}/${name}`);
      return { data: {} };
    },
    requestServiceAccountToken: async () => {
      reads.push('token');
      return { token: 't', expirationTimestamp: new Date() };
    },
  };
  return { source, reads };
}

describe('withObjectCache', () => {
  it('serves repeated reads within the TTL from one API read, per object', async () => {
    const { source, reads } = counting();
    let t = 0;
    const c = withObjectCache(source, 1000, () => t);
    await Promise.all([c.getConfigMap('a', 'x'), c.getConfigMap('a', 'x'), c.getConfigMap('b', 'x')]);
    expect(await c.getConfigMap('a', 'x')).toEqual({ data: { k: 'x' } });
    expect(reads).toEqual(['cm a/x', 'cm b/x']);
    t = 1000;
    await c.getConfigMap('a', 'x');
    expect(reads).toEqual(['cm a/x', 'cm b/x', 'cm a/x']);
  });

  it('caches NotFound but not errors, and never caches tokens', async () => {
    const { source, reads } = counting();
    const c = withObjectCache(source, 1000, () => 0);
    expect(await c.getConfigMap('a', 'missing')).toBeUndefined();
    expect(await c.getConfigMap('a', 'missing')).toBeUndefined();
    await expect(c.getConfigMap('a', 'flaky')).rejects.toThrow('boom');
    expect(await c.getConfigMap('a', 'flaky')).toEqual({ data: { k: 'flaky' } });
    await c.requestServiceAccountToken('a', 'sa', { expirationSeconds: 600, podName: 'p', podUID: 'u' } as never);
    await c.requestServiceAccountToken('a', 'sa', { expirationSeconds: 600, podName: 'p', podUID: 'u' } as never);
    expect(reads).toEqual(['cm a/missing', 'cm a/flaky', 'cm a/flaky', 'token', 'token']);
  });
});

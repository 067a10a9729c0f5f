import { describe, expect, it } from 'vitest';
import { isExtendedResourceName } from '../../../core/devices/resource-name.ts';

describe('isExtendedResourceName', () => {
  it('accepts domain-prefixed names outside kubernetes.io', () => {
    for (const n of ['example.com/resource', 'nvidia.com/gpu', 'a.b/c_d.e-f', 'x/Y9']) expect(isExtendedResourceName(n)).toBe(true);
  });
  it('rejects native, requests.-prefixed and malformed names', () => {
    for (const n of [
      'cpu',
      'memory',
      'kubernetes.io/foo',
      'foo.kubernetes.io/bar',
      'requests.example.com/x',
      'example.com/',
      '/x',
      'Example.com/x',
      'a/b/c',
      'example.com/-x',
      `example.com/${'x'.repeat(64)}`,
      '',
    ]) {
      expect(isExtendedResourceName(n), n).toBe(false);
    }
  });
});

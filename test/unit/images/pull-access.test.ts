import { describe, expect, it } from 'vitest';
import { PullAccess } from '../../../core/images/pull-access.ts';

const alice = { registry: 'reg.io', username: 'alice', password: 'a' };
const bob = { registry: 'reg.io', username: 'bob', password: 'b' };

describe('PullAccess (ensure secret pulled images)', () => {
  it('lets anyone use an image pulled anonymously, and images pulled before this process (preloaded)', () => {
    const a = new PullAccess();
    a.record('sha256:1', undefined);
    expect(a.allows('sha256:1', [undefined])).toBe(true);
    expect(a.allows('sha256:1', [bob])).toBe(true);
    expect(a.allows('sha256:never-recorded', [undefined])).toBe(true);
  });

  it('requires one of the credentials an image was pulled with; others must ask the registry', () => {
    const a = new PullAccess();
    a.record('sha256:2', alice);
    expect(a.allows('sha256:2', [alice])).toBe(true);
    expect(a.allows('sha256:2', [{ ...alice }])).toBe(true);
    expect(a.allows('sha256:2', [undefined])).toBe(false);
    expect(a.allows('sha256:2', [bob])).toBe(false);
    expect(a.allows('sha256:2', [bob, alice])).toBe(true);
    a.record('sha256:2', bob);
    expect(a.allows('sha256:2', [bob])).toBe(true);
    expect(a.allows('sha256:2', [{ ...alice, password: 'wrong' }])).toBe(false);
  });
});

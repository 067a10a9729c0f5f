import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { needsSync } from '../../../core/pods/pod-changes.ts';

const base = (): V1Pod => ({
  metadata: { name: 'p', namespace: 'ns', uid: 'u1', resourceVersion: '1', labels: { a: '1' } },
  spec: { containers: [{ name: 'c', image: 'img:1' }] },
  status: { phase: 'Pending' },
});

describe('needsSync', () => {
  it('ignores status-only updates (our own status patch echoed by the watch)', () => {
    const next = { ...base(), metadata: { ...base().metadata, resourceVersion: '2' }, status: { phase: 'Running' } };
    expect(needsSync(base(), next)).toBe(false);
  });

  it('syncs on deletion, a new uid, labels/annotations, images and activeDeadlineSeconds', () => {
    const b = base();
    expect(needsSync(b, { ...b, metadata: { ...b.metadata, deletionTimestamp: new Date(), deletionGracePeriodSeconds: 30 } })).toBe(true);
    expect(needsSync(b, { ...b, metadata: { ...b.metadata, uid: 'u2' } })).toBe(true);
    expect(needsSync(b, { ...b, metadata: { ...b.metadata, labels: { a: '2' } } })).toBe(true);
    expect(needsSync(b, { ...b, metadata: { ...b.metadata, annotations: { x: 'y' } } })).toBe(true);
    expect(needsSync(b, { ...b, spec: { containers: [{ name: 'c', image: 'img:2' }] } })).toBe(true);
    expect(needsSync(b, { ...b, spec: { ...b.spec!, activeDeadlineSeconds: 5 } })).toBe(true);
  });

  it('syncs on a new generation (a resize among other spec changes): the status then reports it as observedGeneration', () => {
    const b = { ...base(), metadata: { ...base().metadata, generation: 1 } };
    const resized = {
      ...b,
      metadata: { ...b.metadata, generation: 2 },
      spec: { containers: [{ name: 'c', image: 'img:1', resources: { limits: { memory: '64Mi' } } }] },
    };
    expect(needsSync(b, resized)).toBe(true);
    expect(needsSync(b, { ...b, metadata: { ...b.metadata, resourceVersion: '9' } })).toBe(false);
  });
});

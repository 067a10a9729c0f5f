/**
 * Quantities in a pod spec are checked before the pod exists, as upstream's decoding and
 * validation do: a resource limit or an emptyDir sizeLimit that does not parse, or is negative,
 * refuses the pod. Found by the fuzz suite: a static pod with `sizeLimit: "abc"` ran.
 */
import { describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { validatePodCreate } from '../../../core/pods/pod-validation.ts';

const pod = (extra: { limits?: Record<string, unknown>; sizeLimit?: unknown }): V1Pod =>
  ({
    metadata: { name: 'p', namespace: 'default' },
    spec: {
      containers: [{ name: 'c', image: 'i', resources: extra.limits ? { limits: extra.limits } : undefined }],
      volumes: extra.sizeLimit === undefined ? undefined : [{ name: 'v', emptyDir: { sizeLimit: extra.sizeLimit } }],
    },
  }) as V1Pod;

describe('validatePodCreate quantities', () => {
  it('accepts valid quantities, zero included', () => {
    expect(validatePodCreate(pod({ limits: { memory: '64Mi', cpu: '500m' }, sizeLimit: '0' }))).toEqual([]);
    expect(validatePodCreate(pod({ sizeLimit: '1Gi' }))).toEqual([]);
  });

  it.each([
    [{ sizeLimit: 'abc' }, 'spec.volumes[0].emptyDir.sizeLimit: Invalid value: "abc": quantities must match the regular expression'],
    [{ sizeLimit: '-1' }, 'spec.volumes[0].emptyDir.sizeLimit: Invalid value: "-1": must be greater than or equal to 0'],
    [{ limits: { memory: 'lots' } }, 'spec.containers[0].resources.limits[memory]: Invalid value: "lots": quantities must match'],
    [{ limits: { cpu: '-1' } }, 'spec.containers[0].resources.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0'],
    [{ limits: { memory: { big: true } } }, 'spec.containers[0].resources.limits[memory]: Invalid value: {"big":true}: must be a quantity'],
  ])('refuses %j', (extra, message) => {
    const errs = validatePodCreate(pod(extra));
    expect(errs).toHaveLength(1);
    expect(errs[0]).toContain(message);
  });
});

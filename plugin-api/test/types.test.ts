/**
 * Type-level checks of the v1 contract. `npm test` type-checks this file with
 * tsc first: each `@ts-expect-error` must still be an error (an incomplete
 * provider must not compile), or the type check fails.
 */
import { describe, expectTypeOf, it } from 'vitest';
import { API_VERSION, isPodProvider, type AnyProvider, type PodLifecycle, type PodProvider, type Provider, type ProviderFactory } from '../v1/index.ts';

const identity = { name: 'demo', apiVersion: API_VERSION, handlers: ['demo'], architecture: 'demo', os: 'demo', runtimeVersion: 'demo://1' } as const;
const lifecycle: PodLifecycle = { createPod: async () => undefined, deletePod: async () => undefined, getPodStatus: () => undefined };

describe('provider types', () => {
  it('accepts a complete container provider and a complete pod provider', () => {
    const containers: Provider = {
      ...identity,
      pullImage: async () => {
        throw new Error('x');
      },
      startContainer: async () => {
        throw new Error('x');
      },
    };
    const pods: PodProvider = { ...identity, pods: lifecycle };
    expectTypeOf(containers).toMatchTypeOf<AnyProvider>();
    expectTypeOf(pods).toMatchTypeOf<AnyProvider>();
    expectTypeOf<() => Provider>().toMatchTypeOf<ProviderFactory>();
    const check = (p: AnyProvider) => {
      if (isPodProvider(p)) expectTypeOf(p.pods).toEqualTypeOf<PodLifecycle>();
      else expectTypeOf(p.startContainer).toBeFunction();
    };
    check(pods);
    check(containers);
  });

  it('rejects incomplete providers', () => {
    // @ts-expect-error: startContainer is missing
    const noStart: Provider = {
      ...identity,
      pullImage: async () => {
        throw new Error('x');
      },
    };
    // @ts-expect-error: runtimeVersion is missing (handlers may be: the package manifest declares them)
    const noHandlers: PodProvider = { name: 'x', apiVersion: API_VERSION, architecture: 'a', os: 'o', pods: lifecycle };
    // @ts-expect-error: the apiVersion must be nodelet.dev/v1
    const wrongVersion: PodProvider = { ...identity, apiVersion: 'nodelet.dev/v2', pods: lifecycle };
    // @ts-expect-error: a pod provider's lifecycle needs deletePod and getPodStatus
    const halfPods: PodProvider = { ...identity, pods: { createPod: async () => undefined } };
    // @ts-expect-error: a provider is either a container runtime or a pod owner, not both
    const both: AnyProvider = {
      ...identity,
      pods: lifecycle,
      pullImage: async () => {
        throw new Error('x');
      },
      startContainer: async () => {
        throw new Error('x');
      },
    };
    // @ts-expect-error: optional capabilities keep their signatures (stats takes a container id)
    const badStats: PodProvider = { ...identity, pods: lifecycle, stats: async (n: number) => ({ timestamp: new Date(n) }) };
    expectTypeOf([noStart, noHandlers, wrongVersion, halfPods, both, badStats]).toBeArray();
  });
});

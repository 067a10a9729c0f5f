/** Which pulls a new pod's first reconcile starts ahead of its volumes (core/pods/image-prefetch.ts). */
import { describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { imagePullPolicy, prefetchPulls, type PrefetchDeps } from '../../../core/pods/image-prefetch.ts';
import { newRecord, type ContainerRecord } from '../../../core/pods/container-record.ts';

const pod = (init: string[], app: string[]): V1Pod => ({
  metadata: { name: 'p', namespace: 'default', uid: 'uid-p' },
  spec: {
    initContainers: init.map((n) => ({ name: n, image: `registry.test/${n}:v1` })),
    containers: app.map((n) => ({ name: n, image: `registry.test/${n}${n === 'latest' ? '' : ':v1'}` })),
  },
});

function deps(fail?: string) {
  const calls: string[] = [];
  const d: PrefetchDeps = {
    credentials: async () => {
      calls.push('credentials');
      return [{ registry: 'registry.test', username: 'u', password: 'p' }];
    },
    pull: async (image, policy, credentials) => {
      calls.push(`pull ${image} ${policy} ${credentials.length}`);
      if (image.includes(fail ?? '\0')) throw new Error(`no ${image}`);
      return { image, imageID: `${image}@sha256:00`, digest: 'sha256:00', path: '/dev/null', size: 1, cached: true };
    },
  };
  return { d, calls };
}

const records = (names: string[], init: boolean) => names.map((n) => newRecord(n, init));
const exited = (r: ContainerRecord, exitCode: number): ContainerRecord => ({
  ...r,
  waiting: undefined,
  terminated: { exitCode, reason: exitCode ? 'Error' : 'Completed', startedAt: new Date(), finishedAt: new Date(), containerID: 'x://1' },
});

describe('prefetchPulls', () => {
  it('a pod without init containers: every app container, one credentials lookup, upstream pull policies', async () => {
    const { d, calls } = deps();
    const p = pod([], ['a', 'latest']);
    const out = prefetchPulls(p, [], records(['a', 'latest'], false), d);
    expect([...out.keys()]).toEqual(['a', 'latest']);
    expect(out.get('a')!.image).toBe('registry.test/a:v1');
    await expect(out.get('latest')!.result).resolves.toMatchObject({ image: 'registry.test/latest' });
    await out.get('a')!.result;
    expect(calls).toEqual(['credentials', 'pull registry.test/a:v1 IfNotPresent 1', 'pull registry.test/latest Always 1']);
  });

  it('only the first init container that has not succeeded, while one is left to run', () => {
    const { d } = deps();
    const p = pod(['i1', 'i2'], ['a']);
    const init = records(['i1', 'i2'], true);
    expect([...prefetchPulls(p, init, records(['a'], false), d).keys()]).toEqual(['i1']);
    expect([...prefetchPulls(p, [exited(init[0]!, 0), init[1]!], records(['a'], false), d).keys()]).toEqual(['i2']);
    expect([...prefetchPulls(p, [exited(init[0]!, 0), exited(init[1]!, 0)], records(['a'], false), d).keys()]).toEqual(['a']);
    // A failed init container will restart (or fail the pod): nothing to prefetch for it.
    expect([...prefetchPulls(p, [exited(init[0]!, 1), init[1]!], records(['a'], false), d).keys()]).toEqual([]);
  });

  it('nothing for containers that ran, run, start, wait for a pull back-off or are being re-adopted', () => {
    const { d, calls } = deps();
    const p = pod([], ['a', 'b', 'c', 'd', 'e', 'f']);
    const [a, b, c, dd, e, f] = records(['a', 'b', 'c', 'd', 'e', 'f'], false);
    const app = [
      exited(a!, 0),
      { ...b!, waiting: undefined, running: { id: 'b', startedAt: new Date(), exit: new Promise<never>(() => undefined), stop: async () => undefined } },
      { ...c!, starting: true },
      { ...dd!, waiting: { reason: 'ImagePullBackOff' } },
      { ...e!, adopt: { containerID: 'x://e', startedAt: new Date() } },
      f!,
    ];
    expect([...prefetchPulls(p, [], app, d).keys()]).toEqual(['f']);
    expect(calls).toEqual([]); // the credentials are read on the next turn, not inside the call
  });

  it("a failing pull or credentials lookup rejects only the prefetch's result, which the awaiting pull then sees", async () => {
    const { d } = deps('bad');
    const out = prefetchPulls(pod([], ['bad', 'good']), [], records(['bad', 'good'], false), d);
    await expect(out.get('bad')!.result).rejects.toThrow('no registry.test/bad:v1');
    await expect(out.get('good')!.result).resolves.toMatchObject({ cached: true });
    const noCreds = prefetchPulls(pod([], ['a']), [], records(['a'], false), { ...d, credentials: async () => Promise.reject(new Error('secret gone')) });
    await expect(noCreds.get('a')!.result).rejects.toThrow('secret gone');
  });

  it('imagePullPolicy: the spec wins; else Always for :latest or no tag (registry ports are not tags), IfNotPresent otherwise', () => {
    expect(imagePullPolicy({ name: 'x', image: 'r.test/x:v1', imagePullPolicy: 'Never' })).toBe('Never');
    expect(imagePullPolicy({ name: 'x', image: 'r.test/x:latest' })).toBe('Always');
    expect(imagePullPolicy({ name: 'x', image: 'r.test:5000/x' })).toBe('Always');
    expect(imagePullPolicy({ name: 'x', image: 'r.test:5000/x:v1' })).toBe('IfNotPresent');
    expect(imagePullPolicy({ name: 'x', image: 'r.test/x@sha256:00' })).toBe('IfNotPresent');
  });
});

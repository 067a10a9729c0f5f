import { describe, expect, it } from 'vitest';
import type { V1ConfigMap, V1Pod, V1Secret } from '@kubernetes/client-node';
import { WatchingObjectSource, type StartObjectWatch } from '../../../core/volumes/object-watch-manager.ts';
import { podObjectRefs } from '../../../core/volumes/pod-object-refs.ts';
import type { ObjectSource } from '../../../core/volumes/object-source.ts';

/** A fake API: objects by `kind/ns/name`, the watches started and stopped, and the GETs the wrapped source served. */
function fakeApi() {
  const objects = new Map<string, V1ConfigMap | V1Secret>();
  const started: string[] = [];
  const stopped: string[] = [];
  const gets: string[] = [];
  const changed = new Map<string, () => void>();
  const start: StartObjectWatch = (kind, ns, name, onChange) => {
    const key = `${kind}/${ns}/${name}`;
    started.push(key);
    changed.set(key, onChange);
    return { synced: Promise.resolve(), current: () => objects.get(key), stop: () => stopped.push(key) };
  };
  const inner: ObjectSource = {
    getConfigMap: async (ns, n) => (gets.push(`configmaps/${ns}/${n}`), objects.get(`configmaps/${ns}/${n}`)),
    getSecret: async (ns, n) => (gets.push(`secrets/${ns}/${n}`), objects.get(`secrets/${ns}/${n}`)),
    requestServiceAccountToken: async () => ({ token: 't', expirationTimestamp: new Date(0) }),
  };
  return { objects, started, stopped, gets, changed, start, inner };
}

function pod(uid: string, cms: string[], secrets: string[] = []): V1Pod {
  return {
    metadata: { uid, namespace: 'ns', name: `p-${uid}` },
    spec: {
      containers: [{ name: 'c', image: 'i', env: secrets.map((s) => ({ name: s, valueFrom: { secretKeyRef: { name: s, key: 'k' } } })) }],
      volumes: cms.map((n) => ({ name: n, configMap: { name: n } })),
    },
  };
}

describe('WatchingObjectSource', () => {
  it('starts one watch per referenced object however many pods refer to it, and stops it with the last reference', () => {
    const api = fakeApi();
    const src = new WatchingObjectSource(api.inner, api.start);
    src.registerPod(pod('a', ['kube-root-ca.crt', 'cfg'], ['s']));
    src.registerPod(pod('b', ['kube-root-ca.crt']));
    src.registerPod(pod('b', ['kube-root-ca.crt'])); // a re-registration adds no reference
    expect(api.started).toEqual(['configmaps/ns/kube-root-ca.crt', 'configmaps/ns/cfg', 'secrets/ns/s']);
    expect(src.watched()).toEqual({ 'configmaps/ns/kube-root-ca.crt': 2, 'configmaps/ns/cfg': 1, 'secrets/ns/s': 1 });
    src.unregisterPod('a');
    expect(api.stopped.sort()).toEqual(['configmaps/ns/cfg', 'secrets/ns/s']);
    expect(src.watched()).toEqual({ 'configmaps/ns/kube-root-ca.crt': 1 });
    src.unregisterPod('b');
    expect(api.stopped).toContain('configmaps/ns/kube-root-ca.crt');
    expect(src.watched()).toEqual({});
    src.unregisterPod('b'); // twice is harmless
    expect(api.stopped).toHaveLength(3);
  });

  it('an updated pod moves its references: the dropped object is unwatched, the new one watched', () => {
    const api = fakeApi();
    const src = new WatchingObjectSource(api.inner, api.start);
    src.registerPod(pod('a', ['one']));
    src.registerPod(pod('a', ['two']));
    expect(api.stopped).toEqual(['configmaps/ns/one']);
    expect(src.watched()).toEqual({ 'configmaps/ns/two': 1 });
  });

  it('reads watched objects from the watch (no GET), others from the wrapped source', async () => {
    const api = fakeApi();
    api.objects.set('configmaps/ns/cfg', { metadata: { name: 'cfg' }, data: { a: '1' } });
    api.objects.set('configmaps/ns/other', { metadata: { name: 'other' }, data: { b: '2' } });
    const src = new WatchingObjectSource(api.inner, api.start);
    src.registerPod(pod('a', ['cfg']));
    for (let i = 0; i < 5; i++) expect((await src.getConfigMap('ns', 'cfg'))?.data).toEqual({ a: '1' });
    expect(await src.getSecret('ns', 'missing')).toBeUndefined();
    expect((await src.getConfigMap('ns', 'other'))?.data).toEqual({ b: '2' });
    expect(api.gets).toEqual(['secrets/ns/missing', 'configmaps/ns/other']);
  });

  it('a change is reported to the referring pods and marks them changed since then', async () => {
    const api = fakeApi();
    let t = 1000;
    const src = new WatchingObjectSource(api.inner, api.start, undefined, () => t);
    const seen: string[][] = [];
    src.onChange((uids) => seen.push(uids));
    const a = pod('a', ['cfg']);
    const b = pod('b', ['cfg']);
    const c = pod('c', ['unrelated']);
    for (const p of [a, b, c]) src.registerPod(p);
    expect(src.changedSince(a, 500)).toBe(false);
    t = 2000;
    api.objects.set('configmaps/ns/cfg', { metadata: { name: 'cfg' }, data: { a: 'new' } });
    api.changed.get('configmaps/ns/cfg')!();
    expect(seen).toEqual([['a', 'b']]);
    expect(src.changedSince(a, 1500)).toBe(true);
    expect(src.changedSince(a, 2500)).toBe(false);
    expect(src.changedSince(c, 1500)).toBe(false);
    expect((await src.getConfigMap('ns', 'cfg'))?.data).toEqual({ a: 'new' });
  });

  it('falls back to the wrapped source when the first list failed', async () => {
    const api = fakeApi();
    api.objects.set('configmaps/ns/cfg', { metadata: { name: 'cfg' }, data: { a: '1' } });
    const failing: StartObjectWatch = () => ({ synced: Promise.reject(new Error('forbidden')), current: () => undefined, stop: () => undefined });
    const src = new WatchingObjectSource(api.inner, failing);
    src.registerPod(pod('a', ['cfg']));
    expect((await src.getConfigMap('ns', 'cfg'))?.data).toEqual({ a: '1' });
    expect(api.gets).toEqual(['configmaps/ns/cfg']);
  });
});

describe('podObjectRefs', () => {
  it('collects volumes, projected sources, env, envFrom of every container kind, CSI secrets and imagePullSecrets', () => {
    const refs = podObjectRefs({
      metadata: { uid: 'u', namespace: 'ns' },
      spec: {
        imagePullSecrets: [{ name: 'pull' }],
        volumes: [
          { name: 'a', configMap: { name: 'cm-vol' } },
          { name: 'b', secret: { secretName: 's-vol' } },
          { name: 'c', projected: { sources: [{ configMap: { name: 'cm-proj' } }, { secret: { name: 's-proj' } }, { serviceAccountToken: { path: 't' } }] } },
          { name: 'd', csi: { driver: 'x', nodePublishSecretRef: { name: 's-csi' } } },
        ],
        initContainers: [{ name: 'i', envFrom: [{ configMapRef: { name: 'cm-init' } }] }],
        containers: [
          {
            name: 'c',
            env: [
              { name: 'A', valueFrom: { configMapKeyRef: { name: 'cm-env', key: 'k' } } },
              { name: 'B', valueFrom: { secretKeyRef: { name: 's-env', key: 'k' } } },
            ],
            envFrom: [{ secretRef: { name: 's-from' } }],
          },
        ],
      },
    });
    expect([...refs.configMaps].sort()).toEqual(['cm-env', 'cm-init', 'cm-proj', 'cm-vol']);
    expect([...refs.secrets].sort()).toEqual(['pull', 's-csi', 's-env', 's-from', 's-proj', 's-vol']);
  });
});

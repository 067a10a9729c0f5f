/**
 * A short-lived cache of ConfigMaps and Secrets read for pods, like upstream's
 * `configMapAndSecretChangeDetectionStrategy: Cache` (a TTL'd GET cache): a burst
 * of pods that all mount `kube-root-ca.crt` reads it once, not once per pod.
 * NotFound is cached too (a later create is seen after the TTL); errors are not.
 */
import type { V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import type { ObjectSource } from './object-source.ts';

interface Entry<T> {
  at: number;
  value: Promise<T | undefined>;
}

function cached<T>(ttlMs: number, now: () => number, read: (ns: string, name: string) => Promise<T | undefined>) {
  const entries = new Map<string, Entry<T>>();
  return (ns: string, name: string): Promise<T | undefined> => {
    const key = `${ns}/${name}`;
    const hit = entries.get(key);
    if (hit && now() - hit.at < ttlMs) return hit.value;
    const value = read(ns, name);
    entries.set(key, { at: now(), value });
    value.catch(() => entries.delete(key));
    if (entries.size > 4096) entries.delete(entries.keys().next().value!);
    return value;
  };
}

/** Wraps `source` so ConfigMap and Secret reads are served from a cache for `ttlMs`. */
export function withObjectCache(source: ObjectSource, ttlMs = 10_000, now: () => number = Date.now): ObjectSource {
  return {
    getConfigMap: cached<V1ConfigMap>(ttlMs, now, (ns, n) => source.getConfigMap(ns, n)),
    getSecret: cached<V1Secret>(ttlMs, now, (ns, n) => source.getSecret(ns, n)),
    requestServiceAccountToken: (ns, sa, o) => source.requestServiceAccountToken(ns, sa, o),
  };
}

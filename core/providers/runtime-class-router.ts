/**
 * Routes each pod to the provider that serves its RuntimeClass's handler:
 *
 *   spec.runtimeClassName unset ──► the default provider (--default-provider)
 *   set ──► RuntimeClass (cached) ──► handler ──► the provider serving it
 *
 * Failures are admission rejections with reason `UnsupportedRuntimeClass`:
 * an unknown class (upstream's NotFound text), a handler no loaded provider
 * serves, or a missing default provider. While the RuntimeClass cache has not
 * synced the answer is "retry later" (upstream fails the pod sync and retries,
 * it does not reject). Synchronous: only the cache is read.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { AnyProvider } from '@nodelet/plugin-api/v1';
import type { ProviderRouter } from '../pods/index.ts';
import type { RuntimeClassSource } from './runtime-classes.ts';
import type { ServedProvider } from './provider-shape.ts';

/** The admission reason for a pod no provider here can run. */
const UNSUPPORTED_RUNTIME_CLASS = 'UnsupportedRuntimeClass';

/** How long a pod waits before routing is tried again while RuntimeClasses are not listed yet. */
const UNSYNCED_RETRY_MS = 1000;

/** The provider for a pod, why none fits, or when to try again. */
export type Route = { provider: AnyProvider; handler?: string } | { reason: string; message: string } | { retryAfterMs: number; message: string };

/** Options of {@link createRuntimeClassRouter}. */
export interface RouterOptions {
  readonly providers: readonly ServedProvider[];
  /** Name of the provider for pods without a RuntimeClass. */
  readonly defaultProvider: string;
  readonly classes: RuntimeClassSource;
  /** Delay of a retry while the RuntimeClass cache has not synced (default {@link UNSYNCED_RETRY_MS}). */
  readonly retryMs?: number;
}

/** Creates the router. Providers' handlers must be distinct (the loader guarantees it). */
export function createRuntimeClassRouter(o: RouterOptions): (pod: V1Pod) => Route {
  const byHandler = new Map<string, AnyProvider>();
  for (const p of o.providers) for (const h of p.handlers) if (!byHandler.has(h)) byHandler.set(h, p);
  const served = () => [...byHandler.keys()].sort().join(', ') || 'none';
  const reject = (message: string): Route => ({ reason: UNSUPPORTED_RUNTIME_CLASS, message });
  return (pod) => {
    const name = pod.spec?.runtimeClassName;
    if (!name) {
      const p = o.providers.find((x) => x.name === o.defaultProvider);
      return p ? { provider: p } : reject(`the pod names no RuntimeClass and the default provider "${o.defaultProvider}" is not loaded on this node`);
    }
    const found = o.classes.handlerFor(name);
    if (found.kind === 'notFound') return reject(`runtimeclass.node.k8s.io "${name}" not found`);
    if (found.kind === 'unavailable')
      return { retryAfterMs: o.retryMs ?? UNSYNCED_RETRY_MS, message: `cannot resolve RuntimeClass "${name}": ${found.message}` };
    const p = byHandler.get(found.handler);
    if (!p) return reject(`RuntimeClass "${name}" has handler "${found.handler}", which no provider on this node serves (handlers served: ${served()})`);
    return { provider: p, handler: found.handler };
  };
}

/**
 * Adapts a router to the pod controller's {@link ProviderRouter}. The
 * controller drives both kinds of provider (through its one pod worker,
 * which adapts each kind), so every route passes
 * through; only the handler, which the controller does not need, is dropped.
 */
export function controllerRouter(route: (pod: V1Pod) => Route): ProviderRouter {
  return (pod) => {
    const r = route(pod);
    return 'provider' in r ? { provider: r.provider } : r;
  };
}

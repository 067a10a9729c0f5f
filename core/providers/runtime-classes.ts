/**
 * The RuntimeClass → handler lookup the router uses: an informer on
 * node.k8s.io/v1 runtimeclasses (the `system:node` role may get/list/watch
 * them), so routing a pod costs no API call. Lookups are synchronous.
 */
import type { V1RuntimeClass } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import { apiMessage, ListWatch, type KubeClients } from '../kube/index.ts';

/** The answer for one RuntimeClass name. */
export type HandlerLookup =
  | { readonly kind: 'found'; readonly handler: string }
  | { readonly kind: 'notFound' }
  /** The cache has not synced (the first list failed); the message says why. */
  | { readonly kind: 'unavailable'; readonly message: string };

/** A synchronous RuntimeClass lookup. */
export interface RuntimeClassSource {
  handlerFor(name: string): HandlerLookup;
  stop(): void;
}

/** A fixed table of RuntimeClass name → handler (tests). */
export function staticRuntimeClasses(table: Readonly<Record<string, string>>): RuntimeClassSource {
  return { handlerFor: (n) => (n in table ? { kind: 'found', handler: table[n]! } : { kind: 'notFound' }), stop: () => undefined };
}

/**
 * Without an API server there are no RuntimeClass objects: a static pod's
 * `runtimeClassName` is taken as the handler itself (a nodelet extension;
 * upstream's standalone kubelet ignores the field).
 */
export function standaloneRuntimeClasses(): RuntimeClassSource {
  return { handlerFor: (n) => ({ kind: 'found', handler: n }), stop: () => undefined };
}

/** Watches RuntimeClasses; resolves after the first list attempt (retrying in the background if it failed). */
export async function watchRuntimeClasses(clients: KubeClients, log: Logger, retryMs = 2000): Promise<RuntimeClassSource> {
  const path = '/apis/node.k8s.io/v1/runtimeclasses';
  const informer = new ListWatch<V1RuntimeClass>(clients.transport, path, () => clients.node.listRuntimeClass());
  let lastError = 'not listed yet';
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const synced = () => informer.latestResourceVersion() !== '';
  const begin = async () => {
    try {
      await informer.start();
    } catch (e) {
      onError(e);
    }
  };
  const onError = (e: unknown) => {
    if (stopped) return;
    lastError = apiMessage(e);
    log.warn({ err: lastError }, 'RuntimeClass list/watch failed, restarting');
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (!stopped) void begin();
    }, retryMs);
    timer.unref();
  };
  informer.on('error', onError);
  await begin();
  return {
    handlerFor(name) {
      const rc = informer.get(name);
      if (rc) return { kind: 'found', handler: rc.handler };
      return synced() ? { kind: 'notFound' } : { kind: 'unavailable', message: `RuntimeClasses not listed yet: ${lastError}` };
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      void informer.stop();
    },
  };
}

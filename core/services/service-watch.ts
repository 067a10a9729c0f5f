/**
 * The two informers behind the node's Service table: core/v1 Services and discovery.k8s.io/v1
 * EndpointSlices of the whole cluster, one list+watch each for the node (as kube-proxy runs
 * them), whatever the number of pods.
 *
 *   start ──► LIST ──► table filled, synced ──► WATCH (changes applied as they arrive)
 *               │ fails                            │ ends: resumes from its resourceVersion
 *               ▼                                  │ fails: the cache stays, restarted after a delay
 *         logged (NDL_SERVICES_WATCH), retried ◄───┘
 *         after 1 s, doubling to 30 s
 *
 * Permissions: the Node authorizer gives a node `get/list/watch` on Services, but not on
 * EndpointSlices (upstream's `system:node` rules; `system:node-proxier`, kube-proxy's role, has
 * them). Until a binding grants them, nodelet logs NDL_SERVICES_WATCH naming the fix, the
 * resolver answers `unavailable` for Service addresses, and the list is retried.
 */
import type { V1EndpointSlice, V1EndpointSliceList, V1Service, V1ServiceList } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import { nodeletError } from '../errors/index.ts';
import { apiMessage, apiStatus, ListWatch, type KubeClients } from '../kube/index.ts';
import type { ServiceTable } from './service-table.ts';

/** First retry delay after a failed list or watch. */
export const RETRY_MIN_MS = 1000;
/** Longest retry delay. */
export const RETRY_MAX_MS = 30_000;

const SERVICES_PATH = '/api/v1/services';
const SLICES_PATH = '/apis/discovery.k8s.io/v1/endpointslices';

/** What to do about a 403 on EndpointSlices: the binding nodelet needs. */
export const SLICES_RBAC_HINT =
  "grant the nodes list/watch on endpointslices.discovery.k8s.io: `kubectl apply -f deploy/rbac/node-endpointslices.yaml` (or bind kube-proxy's role: `kubectl create clusterrolebinding nodelet-node-proxier --clusterrole=system:node-proxier --group=system:nodes`; see docs/services.md)";

/** The running informers. */
export interface ServiceWatch {
  stop(): void;
}

/** Options of {@link watchServices}. */
export interface ServiceWatchOptions {
  readonly clients: KubeClients;
  readonly table: ServiceTable;
  readonly log: Logger;
  /** First retry delay (default {@link RETRY_MIN_MS}). */
  readonly retryMs?: number;
}

/**
 * Starts both informers; resolves after their first list attempts (a failed one is retried in
 * the background, never thrown: a node without the permission still runs its pods).
 */
export async function watchServices(o: ServiceWatchOptions): Promise<ServiceWatch> {
  const t = o.clients.transport;
  const services = informer<V1Service>(o, 'Services', SERVICES_PATH, () => t.request<V1ServiceList>('GET', SERVICES_PATH), {
    put: (s) => o.table.upsertService(s),
    remove: (s) => o.table.removeService(s),
    synced: () => (o.table.servicesSynced = true),
    failed: () => undefined,
  });
  const slices = informer<V1EndpointSlice>(o, 'EndpointSlices', SLICES_PATH, () => t.request<V1EndpointSliceList>('GET', SLICES_PATH), {
    put: (s) => o.table.upsertSlice(s),
    remove: (s) => o.table.removeSlice(s),
    synced: () => (o.table.slicesSynced = true),
    failed: (why) => {
      if (!o.table.slicesSynced) o.table.slicesProblem = why;
    },
  });
  await Promise.all([services.begin(), slices.begin()]);
  return {
    stop() {
      services.stop();
      slices.stop();
    },
  };
}

interface Sink<T> {
  put(obj: T): void;
  remove(obj: T): void;
  synced(): void;
  failed(why: string): void;
}

function informer<T extends { metadata?: { name?: string; namespace?: string; resourceVersion?: string } }>(
  o: ServiceWatchOptions,
  what: string,
  path: string,
  list: () => Promise<{ items: T[]; metadata?: { resourceVersion?: string } }>,
  sink: Sink<T>,
) {
  const lw = new ListWatch<T>(o.clients.transport, path, list);
  lw.on('add', (x) => sink.put(x));
  lw.on('update', (x) => sink.put(x));
  lw.on('delete', (x) => sink.remove(x));
  const minMs = o.retryMs ?? RETRY_MIN_MS;
  let delayMs = minMs;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let lastProblem = '';
  const failed = (e: unknown) => {
    if (stopped) return;
    const status = apiStatus(e);
    const detail = status === 403 && what === 'EndpointSlices' ? `${apiMessage(e)}: ${SLICES_RBAC_HINT}` : apiMessage(e);
    const err = nodeletError('NDL_SERVICES_WATCH', `${what}: ${detail}`, e);
    sink.failed(err.message);
    // One line per distinct problem, not one per retry.
    if (err.message !== lastProblem) o.log.warn({ code: err.code, status, retryMs: delayMs }, err.message);
    lastProblem = err.message;
    clearTimeout(timer);
    timer = setTimeout(() => void begin(), delayMs);
    timer.unref();
    delayMs = Math.min(delayMs * 2, RETRY_MAX_MS);
  };
  lw.on('error', failed);
  const begin = async () => {
    if (stopped) return;
    try {
      await lw.start();
    } catch {
      return; // reported through 'error'
    }
    if (lastProblem) o.log.info({ what }, `${what} are listed and watched again`);
    lastProblem = '';
    delayMs = minMs;
    sink.synced();
  };
  return {
    begin,
    stop() {
      stopped = true;
      clearTimeout(timer);
      lw.stop();
    },
  };
}

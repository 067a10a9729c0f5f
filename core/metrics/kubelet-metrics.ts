/**
 * nodelet's `/metrics` (Prometheus text format, prom-client): the upstream
 * kubelet's names where the meaning is the same, `nodelet_*` for what only
 * nodelet has. One registry per process (nodelet runs one node per process).
 *
 * | name | type, labels | meaning |
 * | --- | --- | --- |
 * | kubelet_node_name | gauge {node} | always 1 |
 * | kubelet_running_pods | gauge | admitted pods with at least one running container |
 * | kubelet_running_containers | gauge {container_state} | containers of admitted pods by state: running, exited, created |
 * | kubelet_pod_start_duration_seconds | histogram | from first seeing a pod to all of its containers running |
 * | kubelet_pod_worker_duration_seconds | histogram {operation_type} | one pod sync: create (first) or sync |
 * | rest_client_requests_total | counter {code, host, method} | requests to the apiserver through the shared client |
 * | nodelet_provider_pods | gauge {provider} | admitted pods per provider |
 * | nodelet_image_pulls_total | counter {result} | image pulls by result (success, failure) |
 * | nodelet_registered_plugins | gauge {type} | plugins registered through plugins_registry |
 * | nodelet_provider_thread_event_loop_delay_seconds | gauge {provider, thread} | event-loop delay of a provider thread shared by containers (max since the last scrape) |
 * | nodelet_provider_thread_containers | gauge {provider, thread} | containers on a provider thread shared by containers |
 * | nodelet_container_http_* | see request-metrics.ts | requests containers served themselves (wasi:http components) |
 * | kubelet_podcertificate_states | gauge {signer_name, state} | pod certificate projected sources by state (pod-certificate-metrics.ts) |
 * | process_*, nodejs_* | prom-client defaults | nodelet's own process |
 */
import type { ContainerRequestMetrics } from '@nodelet/plugin-api/v1';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from './prom-client.ts';
import { requestMetricsText } from './request-metrics.ts';

/** The registry `/metrics` serves. */
export const registry = new Registry();
collectDefaultMetrics(registry);

/** Upstream's buckets of kubelet_pod_start_duration_seconds (`pkg/kubelet/metrics`). */
const POD_START_BUCKETS = [0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600];

export const nodeName = new Gauge({ name: 'kubelet_node_name', help: "The node's name. The count is always 1.", labelNames: ['node'], registers: [registry] });

/** What the running-pods/containers gauges read at scrape time. */
export interface RunningCounts {
  pods: number;
  containers: Record<'running' | 'exited' | 'created', number>;
  perProvider: Record<string, number>;
  /** Provider threads shared by containers (the providers' `threads()`). */
  threads?: Array<{ provider: string; threadId: number; containers: number; eventLoopDelaySeconds: number }>;
  /** Requests containers served themselves (the providers' `requestMetrics()`), see request-metrics.ts. */
  requests?: readonly ContainerRequestMetrics[];
}

export const runningPods = new Gauge({ name: 'kubelet_running_pods', help: 'Number of pods that have a running pod sandbox', registers: [registry] });
const runningContainers = new Gauge({
  name: 'kubelet_running_containers',
  help: 'Number of containers currently running',
  labelNames: ['container_state'],
  registers: [registry],
});
const providerPods = new Gauge({ name: 'nodelet_provider_pods', help: 'Admitted pods per provider', labelNames: ['provider'], registers: [registry] });
export const podStartDuration = new Histogram({
  name: 'kubelet_pod_start_duration_seconds',
  help: 'Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run',
  buckets: POD_START_BUCKETS,
  registers: [registry],
});
export const podWorkerDuration = new Histogram({
  name: 'kubelet_pod_worker_duration_seconds',
  help: 'Duration in seconds to sync a single pod. Broken down by operation type: create, update, or sync',
  labelNames: ['operation_type'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});
export const restClientRequests = new Counter({
  name: 'rest_client_requests_total',
  help: 'Number of HTTP requests, partitioned by status code, method, and host.',
  labelNames: ['code', 'host', 'method'],
  registers: [registry],
});
export const imagePulls = new Counter({
  name: 'nodelet_image_pulls_total',
  help: 'Image pulls by result (success, failure)',
  labelNames: ['result'],
  registers: [registry],
});
export const registeredPlugins = new Gauge({
  name: 'nodelet_registered_plugins',
  help: 'Plugins registered through the plugins_registry directory, by type',
  labelNames: ['type'],
  registers: [registry],
});

const threadDelay = new Gauge({
  name: 'nodelet_provider_thread_event_loop_delay_seconds',
  help: 'Event-loop delay of a provider thread shared by several containers (the largest since the last scrape)',
  labelNames: ['provider', 'thread'],
  registers: [registry],
});
const threadContainers = new Gauge({
  name: 'nodelet_provider_thread_containers',
  help: 'Containers running on a provider thread shared by several containers',
  labelNames: ['provider', 'thread'],
  registers: [registry],
});

/** The `/metrics` text and its content type; the running pod/container gauges are set from `counts` (the caller's pods) first. */
export async function metricsText(counts: RunningCounts): Promise<{ text: string; contentType: string }> {
  runningPods.set(counts.pods);
  for (const [state, n] of Object.entries(counts.containers)) runningContainers.set({ container_state: state }, n);
  providerPods.reset();
  for (const [provider, n] of Object.entries(counts.perProvider)) providerPods.set({ provider }, n);
  threadDelay.reset();
  threadContainers.reset();
  for (const t of counts.threads ?? []) {
    const labels = { provider: t.provider, thread: String(t.threadId) };
    threadDelay.set(labels, t.eventLoopDelaySeconds);
    threadContainers.set(labels, t.containers);
  }
  return { text: (await registry.metrics()) + requestMetricsText(counts.requests ?? []), contentType: registry.contentType };
}

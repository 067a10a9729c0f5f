/**
 * The messages of upstream's resize events (`pkg/kubelet/events/resize.go`): a prefix, then
 * the pod's resources as JSON, with the generation they are about and an error when there is
 * one — e.g. `Pod resize Deferred: {"containers":[{"name":"c1","resources":{"limits":
 * {"cpu":"1"},"requests":{"cpu":"1"}}}],"generation":2,"error":"Node didn't have enough
 * resource: cpu, requested: 1000, used: 1500, capacity: 2000"}`.
 */
import type { V1Container, V1Pod, V1ResourceRequirements } from '@kubernetes/client-node';
import { goRequirements } from './resources.ts';

/** Upstream's event reasons (`pkg/kubelet/events`). */
export const RESIZE_EVENTS = {
  deferred: 'ResizeDeferred',
  infeasible: 'ResizeInfeasible',
  completed: 'ResizeCompleted',
  started: 'ResizeStarted',
  error: 'ResizeError',
} as const;

interface Allocation {
  name: string;
  resources: V1ResourceRequirements;
}

/** `prefix: <summary>` (upstream `podResizeMessage`); `pod` is the pod whose spec the summary shows. */
function resizeMessage(pod: V1Pod, generation: number, error: string, prefix: string): string {
  const list = (cs: readonly V1Container[]): Allocation[] => cs.map((c) => ({ name: c.name, resources: goRequirements(c.resources) }));
  const init = list(pod.spec?.initContainers ?? []);
  const app = list(pod.spec?.containers ?? []);
  // Go's field order: initContainers, containers (both omitempty), generation, error (omitempty).
  const summary = { ...(init.length ? { initContainers: init } : {}), ...(app.length ? { containers: app } : {}), generation, ...(error ? { error } : {}) };
  return `${prefix}: ${JSON.stringify(summary)}`;
}

/** `ResizeStarted` (upstream `PodResizeStartedMsg`). */
export const resizeStartedMessage = (pod: V1Pod, generation: number) => resizeMessage(pod, generation, '', 'Pod resize started');
/** `ResizeCompleted` (upstream `PodResizeCompletedMsg`). */
export const resizeCompletedMessage = (pod: V1Pod, generation: number) => resizeMessage(pod, generation, '', 'Pod resize completed');
/** `ResizeError` (upstream `PodResizeErrorMsg`). */
export const resizeErrorMessage = (pod: V1Pod, generation: number, error: string) => resizeMessage(pod, generation, error, 'Pod resize error');
/** `ResizeDeferred` / `ResizeInfeasible` (upstream `PodResizePendingMsg`). */
export const resizePendingMessage = (pod: V1Pod, reason: string, message: string, generation: number) =>
  resizeMessage(pod, generation, message, `Pod resize ${reason}`);

/**
 * The face of core/probes: probes (startup, readiness, liveness) and
 * lifecycle hooks of container runs. The composition root builds one
 * {@link ProbeManager}; the container driver (core/pods) uses it.
 */
export { ProbeManager } from './probe-manager.ts';
export type { ContainerProbes, ContainerProbeEvents, ContainerRun } from './container-probes.ts';
export type { ProbeTarget } from './probe-types.ts';
export { targetHost } from './target-host.ts';

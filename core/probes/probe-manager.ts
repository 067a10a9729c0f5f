/**
 * The node's prober (upstream pkg/kubelet/prober/prober_manager.go), built
 * once by the composition root: it owns the one keep-alive HTTP agent every
 * probe and lifecycle hook uses (made with the first of them: a node whose pods
 * have no HTTP probe or hook does not load undici), starts the probes of each container run
 * (`watch`) and runs hooks (`hook`). The container driver keeps the handle
 * it gets and stops it when the run ends.
 */
import type { V1Container, V1LifecycleHandler, V1Pod } from '@kubernetes/client-node';
import type { Agent } from 'undici';
import { createProbeAgent } from './http-check.ts';
import { ContainerProbes, type ContainerProbeEvents, type ContainerRun } from './container-probes.ts';
import { runHook } from './lifecycle-hooks.ts';
import type { ProbeTarget } from './probe-types.ts';
import { forgetProbeSeries } from '../metrics/index.ts';

/** The node's prober; see the header. */
export class ProbeManager {
  private shared: Agent | undefined;

  constructor(agent?: Agent) {
    this.shared = agent;
  }

  /** The shared agent, made on first use. */
  private get agent(): Agent {
    return (this.shared ??= createProbeAgent());
  }

  /** Starts the probes of a container run; undefined when the container declares none. */
  watch(run: ContainerRun, on: ContainerProbeEvents): ContainerProbes | undefined {
    const probes = new ContainerProbes(run, () => this.agent, on);
    if (!probes.any) return undefined;
    probes.start();
    return probes;
  }

  /** Runs a lifecycle hook within `timeoutMs`: undefined on success, else upstream's failure message. */
  hook(handler: V1LifecycleHandler, pod: V1Pod, container: V1Container, target: ProbeTarget, timeoutMs: number): Promise<string | undefined> {
    return runHook(handler, pod, container, target, timeoutMs, this.agent);
  }

  /** Drops the `prober_probe_total` series of a pod's containers (the pod is gone; a container restart keeps them, as upstream). */
  forgetPod(pod: { name: string; namespace: string; uid: string }, containers: readonly string[]): void {
    for (const container of containers)
      for (const kind of ['Startup', 'Readiness', 'Liveness'])
        forgetProbeSeries({ container, pod: pod.name, namespace: pod.namespace, pod_uid: pod.uid }, kind);
  }

  /** Closes the shared agent's idle connections (nodelet stops). */
  async close(): Promise<void> {
    await this.shared?.close();
  }
}

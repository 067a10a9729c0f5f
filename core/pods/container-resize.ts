/**
 * The container driver's part of in-place pod resize (upstream `kuberuntime`'s
 * `computePodResizeAction`, `doPodResizeAction` and `IsPodResizeInProgress`): at each sync,
 * every running container whose allocated cpu/memory differ from those its run has is
 * resized, and the pod's `PodResizeInProgress` condition follows.
 *
 *   allocated == actuated for every running container ──► completed (condition cleared)
 *   a difference ──► in progress, and for that container:
 *     a changed resource whose resizePolicy is RestartContainer ──► restart(): killed
 *       ("Container X resize requires restart"), started again with the new resources
 *     otherwise, limits unchanged (requests only) ──► recorded at once
 *     otherwise ──► provider.resizeContainer(limits) in the background (one at a time per run):
 *       applied ──► recorded, sync again ──► completed
 *       refused (memory in use ≥ the new limit) ──► Error "cannot decrease memory limits: …
 *         memory limit (N) below current usage (M)", posted at once, tried again after RESIZE_RETRY_MS
 *       failed / no such capability ──► Error with the message, likewise
 *
 * Which containers: app containers and restartable (sidecar) init containers; others are
 * never resized while they run (upstream `IsResizableContainer`). A container that does not
 * run gets its allocated resources when it starts.
 */
import type { V1Container, V1Pod, V1ResourceRequirements } from '@kubernetes/client-node';
import type { Provider, RunningContainer } from '@nodelet/plugin-api/v1';
import type { ResizeActuation } from './pod-allocation.ts';
import type { ContainerRecord } from './container-record.ts';
import { containerLimits } from './container-limits.ts';
import { isSidecar } from './restart-rules.ts';
import { milliCpu, quantityUnits } from '../kube/index.ts';

/**
 * How long after a failed in-place resize the pod is synced again to retry it: upstream's pod
 * worker retries a sync that returned an error (a failed resize is one) after its back-off
 * period, 10 s.
 */
export const RESIZE_RETRY_MS = 10_000;

/** The four resizable values of a container, in upstream's units (bytes, millicores); 0 when absent. */
interface Amounts {
  memoryLimit: number;
  memoryRequest: number;
  cpuLimit: number;
  cpuRequest: number;
}

function amounts(r: V1ResourceRequirements | undefined): Amounts {
  return {
    memoryLimit: quantityUnits(r?.limits?.memory),
    memoryRequest: quantityUnits(r?.requests?.memory),
    cpuLimit: milliCpu(r?.limits?.cpu),
    cpuRequest: milliCpu(r?.requests?.cpu),
  };
}

/** The resources whose request or limit differ between `a` and `b`. */
function changed(a: Amounts, b: Amounts): Array<'cpu' | 'memory'> {
  const out: Array<'cpu' | 'memory'> = [];
  if (a.memoryLimit !== b.memoryLimit || a.memoryRequest !== b.memoryRequest) out.push('memory');
  if (a.cpuLimit !== b.cpuLimit || a.cpuRequest !== b.cpuRequest) out.push('cpu');
  return out;
}

/** The container's resize policy for `resource` (upstream's implicit default: NotRequired). */
function policy(c: V1Container, resource: 'cpu' | 'memory'): string {
  return c.resizePolicy?.find((p) => p.resourceName === resource)?.restartPolicy ?? 'NotRequired';
}

/** Upstream `IsResizableContainer` (InPlacePodVerticalScalingInitContainers off): app containers and sidecars. */
export function isResizable(c: V1Container, init: boolean): boolean {
  return !init || isSidecar(c);
}

/** What the resizer needs of its container driver. */
export interface ResizerEnv {
  /** Re-queues the pod's key after `ms`. */
  requeue(ms: number): void;
}

/** Resizes the running containers of one pod (see the file's comment). */
export class ContainerResizer {
  /** Runs with a `resizeContainer` call in flight. */
  private readonly inFlight = new Set<RunningContainer>();
  /** Runs whose last in-place resize failed: the resources asked, and when (`Date.now()`) the same may be asked again. */
  private readonly retryAt = new Map<RunningContainer, { at: number; want: string }>();

  constructor(
    private readonly provider: Provider,
    private readonly a: ResizeActuation,
    private readonly env: ResizerEnv,
  ) {}

  /** A run of `spec` started with `spec`'s resources (the allocated ones: the driver starts containers from the allocated pod). */
  started(pod: V1Pod, spec: V1Container): void {
    this.a.setActuated(pod.metadata!.uid!, spec.name, spec.resources ?? {});
  }

  /**
   * Compares each running container of `records` with `pod` (the allocated pod) and resizes
   * those that differ; `restart` kills a container whose resize needs a restart (the driver
   * starts it again). Never throws; returns at once (in-place resizes go on in the background).
   */
  sync(pod: V1Pod, records: readonly ContainerRecord[], restart: (rec: ContainerRecord, spec: V1Container, message: string) => void): void {
    const uid = pod.metadata!.uid!;
    let inProgress = false;
    for (const rec of records) {
      const run = rec.running;
      if (!run || rec.killing) continue;
      const spec = (rec.init ? pod.spec?.initContainers : pod.spec?.containers)?.find((c) => c.name === rec.name);
      if (!spec || !isResizable(spec, rec.init)) continue;
      const had = this.a.actuated(uid, rec.name);
      if (!had) {
        // A run started before nodelet kept records (an older nodelet, re-adopted): it has what was allocated.
        this.a.setActuated(uid, rec.name, spec.resources ?? {});
        continue;
      }
      const want = amounts(spec.resources);
      const now = amounts(had);
      const resources = changed(want, now);
      if (resources.length === 0) continue;
      const retry = this.retryAt.get(run);
      if (this.inFlight.has(run) || (retry && retry.want === JSON.stringify(want) && retry.at > Date.now())) {
        inProgress = true;
        continue;
      }
      if (resources.some((r) => policy(spec, r) === 'RestartContainer')) {
        inProgress = true;
        restart(rec, spec, `Container ${rec.name} resize requires restart`);
        continue;
      }
      if (want.memoryLimit === now.memoryLimit && want.cpuLimit === now.cpuLimit) {
        // Requests only: nothing the provider enforces changes (upstream writes no memory request to cgroups).
        this.a.setActuated(uid, rec.name, spec.resources ?? {});
        continue;
      }
      inProgress = true;
      this.inPlace(pod, rec, spec, run, want);
    }
    if (inProgress) this.a.inProgress(pod);
    else this.a.completed(pod);
  }

  /** Asks the provider for `spec`'s limits on `run` (upstream `updateContainerResources`). */
  private inPlace(pod: V1Pod, rec: ContainerRecord, spec: V1Container, run: RunningContainer, want: Amounts): void {
    const uid = pod.metadata!.uid!;
    const provider = this.provider;
    if (!provider.resizeContainer) {
      this.a.failed(pod, `provider "${provider.name}" cannot resize containers in place`);
      this.retryAt.set(run, { at: Date.now() + RESIZE_RETRY_MS, want: JSON.stringify(want) });
      this.env.requeue(RESIZE_RETRY_MS);
      return;
    }
    this.inFlight.add(run);
    this.retryAt.delete(run);
    let failed = false;
    provider
      .resizeContainer(run.id, containerLimits(spec))
      .then(
        (o) => {
          if (o.applied) return this.a.setActuated(uid, rec.name, spec.resources ?? {});
          failed = true;
          // Upstream's message (kuberuntime validateMemoryResizeAction).
          this.a.failed(
            pod,
            `cannot decrease memory limits: attempting to set container "${rec.name}" memory limit (${want.memoryLimit}) below current usage (${o.memoryUsageBytes ?? 0})`,
          );
        },
        (e: unknown) => {
          failed = true;
          if (rec.running === run) this.a.failed(pod, `failed to resize container "${rec.name}": ${(e as Error)?.message ?? String(e)}`);
        },
      )
      .finally(() => {
        this.inFlight.delete(run);
        // Synced now (the new resources, or the error, are posted); a failed one is tried again after the back-off.
        if (failed && rec.running === run) {
          this.retryAt.set(run, { at: Date.now() + RESIZE_RETRY_MS, want: JSON.stringify(want) });
          this.env.requeue(RESIZE_RETRY_MS);
        } else this.retryAt.delete(run);
        this.env.requeue(0);
      });
  }
}

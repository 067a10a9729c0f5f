/**
 * Applies device-plugin allocations to containers by wrapping the pod
 * setup: env vars from the Allocate responses (lowest precedence, like
 * resolveEnv's `extra`), and device mounts appended to the volume mounts
 * (staged for providers that mount directories only). What cannot be
 * applied becomes a `Warning` event on the pod.
 *
 * A container that asks for devices but holds none (its pod was not
 * allocated at admission) is allocated here first, as upstream
 * `GetDeviceRunContainerOptions` re-allocates; a failure fails the container
 * start with upstream's admission message (`CreateContainerConfigError`).
 */
import type { V1Pod } from '@kubernetes/client-node';
import { nodeletError } from '../errors/catalogue.ts';
import type { Events } from '../events/event-recorder.ts';
import type { PodSetup } from '../pods/pod-setup.ts';
import { DEVICE_WARNING_REASON } from './container-devices.ts';
import type { DevicePlugins } from './index.ts';

/** Wraps `setup` so containers get their devices' env and mounts. */
export function withDevicePlugins(setup: PodSetup, devices: Pick<DevicePlugins, 'manager' | 'containerEnv' | 'containerMounts'>, events: Events): PodSetup {
  const ensureAllocated = async (pod: V1Pod): Promise<void> => {
    if (!devices.manager.needsAllocation(pod)) return;
    const r = await devices.manager.allocate(pod);
    if (!r.admit) throw nodeletError('NDL_CONTAINER_CONFIG', r.message);
  };
  return {
    prepare: (pod) => setup.prepare(pod),
    argv: (container, env) => setup.argv(container, env),
    logPath: (pod, container, restartCount) => setup.logPath(pod, container, restartCount),
    credentials: (pod) => setup.credentials(pod),
    teardown: (pod) => setup.teardown(pod),
    podDir: (pod) => setup.podDir(pod),
    async env(pod, container) {
      await ensureAllocated(pod);
      const own = await setup.env(pod, container);
      const extra = devices.containerEnv(pod, container);
      if (Object.keys(extra).length === 0) return own;
      const out: Record<string, string> = { ...extra };
      for (const k of Object.keys(own)) delete out[k];
      return Object.assign(out, own);
    },
    async mounts(pod, container, prepared, env) {
      const own = await setup.mounts(pod, container, prepared, env);
      const dev = devices.containerMounts(pod, container, setup.podDir(pod), own.map((m) => m.containerPath));
      const m = pod.metadata!;
      for (const w of dev.warnings) {
        events.emit({ kind: 'Pod', namespace: m.namespace!, name: m.name!, uid: m.uid!, fieldPath: `spec.containers{${container.name}}` }, 'Warning', DEVICE_WARNING_REASON, w);
      }
      return dev.mounts.length ? [...own, ...dev.mounts] : own;
    },
  };
}

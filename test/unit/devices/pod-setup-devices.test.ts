import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { isNodeletError } from '../../../core/errors/catalogue.ts';
import { withDevicePlugins } from '../../../core/devices/pod-setup-devices.ts';
import type { PodSetup } from '../../../core/pods/pod-setup.ts';

const pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: { containers: [{ name: 'c' }] } } as V1Pod;
const c = pod.spec!.containers[0]!;

function base(): PodSetup {
  return {
    prepare: async () => 'prepared', argv: () => ['a'], logPath: () => '/l', credentials: async () => [], teardown: async () => undefined, podDir: () => '/pods/u1',
    env: async () => ({ OWN: '1', SHARED: 'container' }),
    mounts: async () => [{ name: 'v', hostPath: '/h', containerPath: '/data', readOnly: false }],
  };
}

describe('withDevicePlugins', () => {
  it('adds device env at the lowest precedence and appends device mounts; warnings become events', async () => {
    const events: string[] = [];
    let takenSeen: readonly string[] = [];
    const wrapped = withDevicePlugins(base(), {
      manager: { needsAllocation: () => false } as never,
      containerEnv: () => ({ DEV: 'Dev-1', SHARED: 'device' }),
      containerMounts: (_p, _c, podDir, taken) => { takenSeen = taken; return { env: {}, mounts: [{ name: 'device-mount-0', hostPath: `${podDir}/x`, containerPath: '/tmp', readOnly: false }], warnings: ['CDI device v=1 cannot be applied by this provider'] }; },
    }, { emit: (_r, type, reason, note) => events.push(`${type} ${reason} ${note}`) });
    expect(await wrapped.env(pod, c)).toEqual({ DEV: 'Dev-1', OWN: '1', SHARED: 'container' });
    expect(await wrapped.mounts(pod, c, undefined, {})).toEqual([
      { name: 'v', hostPath: '/h', containerPath: '/data', readOnly: false },
      { name: 'device-mount-0', hostPath: '/pods/u1/x', containerPath: '/tmp', readOnly: false },
    ]);
    expect(takenSeen).toEqual(['/data']);
    expect(events).toEqual(['Warning DeviceConfigNotApplied CDI device v=1 cannot be applied by this provider']);
    expect(wrapped.argv(c, {})).toEqual(['a']);
  });

  it('allocates a container that holds no devices yet; a failure is a container config error with the upstream message', async () => {
    const calls: string[] = [];
    const wrapped = withDevicePlugins(base(), {
      manager: { needsAllocation: () => true, allocate: async () => { calls.push('allocate'); return { admit: false, reason: 'UnexpectedAdmissionError', message: 'Allocate failed due to x, which is unexpected' }; } } as never,
      containerEnv: () => ({}), containerMounts: () => ({ env: {}, mounts: [], warnings: [] }),
    }, { emit: () => undefined });
    const err = await wrapped.env(pod, c).catch((e: unknown) => e);
    expect(calls).toEqual(['allocate']);
    expect(isNodeletError(err) && err.code).toBe('NDL_CONTAINER_CONFIG');
    expect(String((err as Error).message)).toContain('Allocate failed due to x, which is unexpected');
  });
});

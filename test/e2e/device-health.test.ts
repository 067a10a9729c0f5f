/**
 * Device health in the pod status (ResourceHealthStatus, beta and on in 1.36):
 * Kubernetes' own e2e_node test device plugin registers a resource with one
 * device; a pod holding it reports `allocatedResourcesStatus` with the device
 * Healthy, and Unhealthy once the plugin reports it so over ListAndWatch —
 * read through the apiserver, as a user sees it.
 */
import type { V1Pod, V1ResourceStatus } from '@kubernetes/client-node';
import { copyFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { startTestDevicePlugin, type TestDevicePlugin } from '../peers/test-device-plugin.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, waitNodeReady } from './support/kube.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

// Ported from upstream test/e2e_node/device_plugin_failures_pod_status_test.go,
// "Device Plugin Failures Pod Status [FeatureGate:ResourceHealthStatus]".
describe('device plugin health in allocatedResourcesStatus', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'dph-n1';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  let sleep: string;
  const plugins: TestDevicePlugin[] = [];

  beforeAll(async () => {
    reg = await startRegistry();
    sleep = await pushModule(reg, 'sleep');
    nodelet = await startNodelet(info, nodeName);
    ns = await podNamespace(k.core, 'devhealth');
    await waitNodeReady(k.core, nodeName);
  });
  afterAll(async () => {
    for (const p of plugins) await p.stop();
    if (nodelet && existsSync(nodelet.logFile)) copyFileSync(nodelet.logFile, join(tmpdir(), 'nodelet-device-health-e2e.log'));
    await nodelet?.dispose();
    await reg?.stop();
  });

  /** Upstream's set-up: a plugin with one Healthy device "testdevice", capacity and allocatable 1 on the Node. */
  async function pluginWithOneDevice(unique: string): Promise<{ plugin: TestDevicePlugin; resource: string }> {
    const resource = `test.device/${unique}`;
    const plugin = await startTestDevicePlugin({
      kubeletSocketDir: join(nodelet.rootDir, 'device-plugins'),
      resource,
      uniqueName: unique,
      devices: ['testdevice'],
    });
    plugins.push(plugin);
    await eventually(
      'capacity and allocatable 1',
      async () => {
        const n = await k.core.readNode({ name: nodeName });
        return n.status?.capacity?.[resource] === '1' && n.status.allocatable?.[resource] === '1';
      },
      60_000,
      250,
    );
    return { plugin, resource };
  }

  const createPod = (name: string, resource: string, image: string) =>
    k.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name },
        spec: {
          tolerations: [WASM_TOLERATION],
          nodeSelector: { 'kubernetes.io/hostname': nodeName },
          restartPolicy: 'Always',
          containers: [{ name: 'container-1', image, args: ['3600'], resources: { limits: { [resource]: '1' }, requests: { [resource]: '1' } } }],
        },
      },
    });

  const read = (name: string) => k.core.readNamespacedPod({ name, namespace: ns });
  const podUntil = async (name: string, what: string, ok: (p: V1Pod) => boolean) => {
    let last: V1Pod | undefined;
    try {
      return await eventually(
        `${name}: ${what}`,
        async () => {
          last = await read(name);
          return ok(last) ? last : undefined;
        },
        60_000,
        250,
      );
    } catch (e) {
      throw new Error(`${(e as Error).message}; last status: ${JSON.stringify(last?.status)}`);
    }
  };
  /** The client's model objects as plain data, so they compare with literals whatever their key order. */
  const plain = (v: unknown): unknown => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));
  const statusIs = (want: V1ResourceStatus[]) => (p: V1Pod) => isDeepStrictEqual(plain(p.status?.containerStatuses?.[0]?.allocatedResourcesStatus), want);
  const one = (resource: string, health: string): V1ResourceStatus[] => [{ name: resource, resources: [{ resourceID: 'testdevice', health }] }];

  it('will report a Healthy and then Unhealthy single device in the pod status', async () => {
    const { plugin, resource } = await pluginWithOneDevice('healthy-then-unhealthy');
    await createPod('dp-health-running', resource, sleep);
    await podUntil('dp-health-running', 'Running', (p) => p.status?.phase === 'Running');
    const healthy = await podUntil('dp-health-running', 'device Healthy in the status', statusIs(one(resource, 'Healthy')));
    expect(healthy.status!.containerStatuses![0]!.allocatedResourcesStatus).toEqual(one(resource, 'Healthy'));

    plugin.setHealth({ testdevice: 'Unhealthy' });
    const unhealthy = await podUntil('dp-health-running', 'device Unhealthy in the status', statusIs(one(resource, 'Unhealthy')));
    expect(unhealthy.status!.containerStatuses![0]!.allocatedResourcesStatus).toEqual(one(resource, 'Unhealthy'));
    // The device is still held and the container keeps running: health is reported, not acted on.
    expect(unhealthy.status!.containerStatuses![0]!.state?.running).toBeDefined();
    // The Node's allocatable follows (its status is posted on its own schedule).
    await eventually(
      'allocatable 0, capacity 1',
      async () => {
        const n = await k.core.readNode({ name: nodeName });
        return n.status?.capacity?.[resource] === '1' && n.status.allocatable?.[resource] === '0';
      },
      60_000,
      250,
    );
    await k.core.deleteNamespacedPod({ name: 'dp-health-running', namespace: ns, gracePeriodSeconds: 0 });
  });

  it('will report a Device Status for the failed pod in the pod status', async () => {
    const { plugin, resource } = await pluginWithOneDevice('failed-pod');
    await createPod('dp-health-failed', resource, `${reg.host}/no/such-image:v1`);
    await podUntil('dp-health-failed', 'Pending in ImagePullBackOff', (p) => {
      const waiting = p.status?.containerStatuses?.[0]?.state?.waiting?.reason;
      return p.status?.phase === 'Pending' && (waiting === 'ImagePullBackOff' || waiting === 'ErrImagePull');
    });
    await podUntil('dp-health-failed', 'device Healthy in the status', statusIs(one(resource, 'Healthy')));
    plugin.setHealth({ testdevice: 'Unhealthy' });
    await podUntil('dp-health-failed', 'device Unhealthy in the status', statusIs(one(resource, 'Unhealthy')));
    await k.core.deleteNamespacedPod({ name: 'dp-health-failed', namespace: ns, gracePeriodSeconds: 0 });
  });
});

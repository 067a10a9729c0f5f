/**
 * ConfigMaps and Secrets referenced by pods are watched per object (upstream's
 * default `Watch` change-detection strategy): a changed ConfigMap or Secret
 * reaches the running pod's volume files without waiting for the periodic
 * volume re-sync (1 min; nodelet runs here with a 10 min pod sync frequency,
 * so only the watch can bring the change before the 45 s this test waits).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setHeaderOptions, type V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, eventually, podNamespace, podUntil, waitNodeReady } from './support/kube.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

describe('ConfigMap and Secret volumes follow their objects through a watch', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'cmwatch-n1';
  let nodelet: NodeletProcess;
  let reg: TestRegistry;
  let ns: string;
  let sleep: string;

  beforeAll(async () => {
    reg = await startRegistry();
    sleep = await pushModule(reg, 'sleep');
    nodelet = await startNodelet(info, nodeName, ['--sync-frequency=10m']);
    ns = await podNamespace(k.core, 'cmwatch');
    await waitNodeReady(k.core, nodeName);
  });
  afterAll(async () => {
    await nodelet?.dispose();
    await reg?.stop();
  });

  const read = (uid: string, plugin: string, volume: string, file: string) => {
    try {
      return readFileSync(join(nodelet.rootDir, 'pods', uid, 'volumes', plugin, volume, file), 'utf8');
    } catch {
      return undefined;
    }
  };

  it('an updated ConfigMap and Secret change the running pod volume files within seconds', async () => {
    await k.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'cfg' }, data: { color: 'blue' } } });
    await k.core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'sec' }, stringData: { password: 'one' } } });
    const spec: V1PodSpec = {
      tolerations: [WASM_TOLERATION],
      nodeSelector: { 'kubernetes.io/hostname': nodeName },
      volumes: [
        { name: 'cfg', configMap: { name: 'cfg' } },
        { name: 'sec', secret: { secretName: 'sec' } },
      ],
      containers: [
        {
          name: 'main',
          image: sleep,
          args: ['1000000'],
          volumeMounts: [
            { name: 'cfg', mountPath: '/etc/cfg' },
            { name: 'sec', mountPath: '/etc/sec' },
          ],
        },
      ],
    };
    await k.core.createNamespacedPod({ namespace: ns, body: { metadata: { name: 'watcher' }, spec } });
    const pod = await podUntil(k.core, ns, 'watcher', 'Running', (p) => p.status?.phase === 'Running');
    const uid = pod.metadata!.uid!;
    expect(read(uid, 'kubernetes.io~configmap', 'cfg', 'color')).toBe('blue');
    expect(read(uid, 'kubernetes.io~secret', 'sec', 'password')).toBe('one');

    await k.core.patchNamespacedConfigMap(
      { name: 'cfg', namespace: ns, body: { data: { color: 'green' } } },
      setHeaderOptions('Content-Type', 'application/merge-patch+json'),
    );
    await k.core.replaceNamespacedSecret({ name: 'sec', namespace: ns, body: { metadata: { name: 'sec' }, stringData: { password: 'two' } } });
    await eventually('the ConfigMap change in the volume', () => read(uid, 'kubernetes.io~configmap', 'cfg', 'color') === 'green', 45_000);
    await eventually('the Secret change in the volume', () => read(uid, 'kubernetes.io~secret', 'sec', 'password') === 'two', 45_000);
  });
});

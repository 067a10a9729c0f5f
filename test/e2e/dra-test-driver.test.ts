/**
 * Smoke test of the DRA test driver peer (test/peers/dra-test-driver.ts):
 * started against a kubelet-style root dir it creates its registration socket
 * under `<root>/plugins_registry` and its DRAPlugin socket under
 * `<root>/plugins/<driver>/`, and publishes a ResourceSlice for the node once
 * the Node exists. No kubelet is involved here (nodelet's DRA side is tested in
 * dra.test.ts), so the Node is created by the admin.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DRA_TEST_DRIVER_NAME, startDraTestDriver, type DraTestDriver } from '../peers/dra-test-driver.ts';
import { isSocket } from '../peers/running-peer.ts';
import { adminClients, eventually } from './support/kube.ts';

describe('DRA test driver peer', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const resource = k.kc.makeApiClient(k8s.ResourceV1Api);
  const nodeName = 'dra-smoke-n1';
  let root: string;
  let driver: DraTestDriver | undefined;

  const slices = async () =>
    (await resource.listResourceSlice({ fieldSelector: `spec.nodeName=${nodeName}` })).items.filter((s) => s.spec.driver === DRA_TEST_DRIVER_NAME);

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'nodelet-dra-smoke-'));
    driver = await startDraTestDriver(info, { nodeName, rootDir: root, cdiDir: join(root, 'cdi') });
  });
  afterAll(async () => {
    await driver?.stop();
    await k.core.deleteNode({ name: nodeName }).catch(() => undefined);
    for (const s of await slices().catch(() => [])) await resource.deleteResourceSlice({ name: s.metadata!.name! }).catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  });

  it('creates its registration socket and its DRAPlugin socket under the root dir', () => {
    expect(driver!.registrationSocket).toBe(join(root, 'plugins_registry', `${DRA_TEST_DRIVER_NAME}-reg.sock`));
    expect(isSocket(driver!.registrationSocket)).toBe(true);
    expect(isSocket(join(root, 'plugins', DRA_TEST_DRIVER_NAME, 'dra.sock'))).toBe(true);
  });

  it('publishes a ResourceSlice owned by the Node once the Node exists', async () => {
    expect(await slices()).toEqual([]);
    const node = await k.core.createNode({ body: { metadata: { name: nodeName, labels: { 'kubernetes.io/hostname': nodeName } } } });
    const [slice] = await eventually(
      'ResourceSlice for the node',
      async () => {
        const s = await slices();
        return s.length > 0 && s;
      },
      60_000,
      250,
    );
    expect(slice!.metadata?.ownerReferences).toEqual([expect.objectContaining({ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: node.metadata!.uid })]);
    expect(slice!.spec.nodeName).toBe(nodeName);
    expect(slice!.spec.devices?.map((d) => d.name)).toEqual(['device-00', 'device-01', 'device-02', 'device-03']);
    expect(driver!.peer.proc.exitCode).toBeNull();
  });
});

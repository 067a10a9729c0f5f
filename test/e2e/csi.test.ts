/**
 * CSI end to end: the harness's hostpathplugin and csi-node-driver-registrar
 * (stand-ins with the upstream flags and wire types, see test/peers/README.md)
 * register with nodelet through its plugins_registry; the driver's node info
 * lands in the Node and CSINode; Wasm pods use inline ephemeral and PVC-backed
 * CSI volumes mounted by the driver; nothing stays mounted after the pods go.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { V1CSINode, V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sha256Hex } from '../../core/volumes/csi/csi-paths.ts';
import { startRegistry, type TestRegistry } from '../harness/registry.ts';
import {
  HOSTPATH_DRIVER_NAME as DRIVER,
  HOSTPATH_TOPOLOGY_KEY,
  startHostpathPlugin,
  startNodeDriverRegistrar,
  type HostpathPlugin,
  type NodeDriverRegistrar,
} from '../peers/csi-hostpath.ts';
import * as grpc from '@grpc/grpc-js';
import { loadCsi } from '../../sockets/csi.ts';
import { unixTarget } from '../../sockets/dial.ts';
import { createCsiVolume } from '../peers/csi-controller.ts';
import { startFakePlugin } from '../unit/pluginmanager/fake-registration-server.ts';
import { pushModule, WASM_TOLERATION } from './support/images.ts';
import { adminClients, createBoundCsiClaim, eventually, freshNamespace, podUntil } from './support/kube.ts';
import { startNodelet, type NodeletProcess } from './support/nodelet-process.ts';

/** Mount targets at or below `root`, as findmnt lists them. */
function mountsUnder(root: string): string[] {
  const out = execFileSync('findmnt', ['-rn', '-o', 'TARGET'], { encoding: 'utf8' });
  // findmnt -r escapes spaces etc. as \x20; our paths have none.
  return out.split('\n').filter((m) => m === root || m.startsWith(`${root}/`));
}

describe('CSI with the hostpath driver and node-driver-registrar', () => {
  const info = inject('cluster');
  const k = adminClients(info);
  const nodeName = 'csi-n1';
  let nodelet: NodeletProcess;
  let driver: HostpathPlugin;
  let registrar: NodeDriverRegistrar | undefined;
  let reg: TestRegistry;
  let ns: string;
  let registryDir: string;
  let stateDir: string;
  const img: Record<string, string> = {};

  const csiNodeDriver = async () => {
    const c: V1CSINode | undefined = await k.storage.readCSINode({ name: nodeName }).catch(() => undefined);
    return c?.spec?.drivers?.find((d) => d.name === DRIVER);
  };

  /** Starts the registrar; returns ms from its socket's creation to the CSINode listing the driver. */
  const startRegistrar = async (): Promise<number> => {
    registrar = await startNodeDriverRegistrar({
      csiAddress: driver.endpointSocket,
      kubeletRegistrationPath: driver.endpointSocket,
      pluginRegistrationDir: registryDir,
    });
    const created = statSync(registrar.registrationSocket).ctimeMs;
    await eventually('CSINode lists the driver', csiNodeDriver, 30_000, 20);
    return Date.now() - created;
  };

  beforeAll(async () => {
    reg = await startRegistry();
    for (const m of ['write-file', 'read-file', 'sleep']) img[m] = await pushModule(reg, m);
    nodelet = await startNodelet(info, nodeName);
    registryDir = join(nodelet.rootDir, 'plugins_registry');
    stateDir = join(nodelet.rootDir, 'hostpath-state');
    ns = await freshNamespace(k.core, 'csi');
    await eventually('node Ready', async () => {
      const n = await k.core.readNode({ name: nodeName }).catch(() => undefined);
      return n?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    });
    await k.storage
      .createCSIDriver({
        body: {
          metadata: { name: DRIVER },
          spec: { attachRequired: false, podInfoOnMount: true, volumeLifecycleModes: ['Persistent', 'Ephemeral'], fsGroupPolicy: 'File' },
        },
      })
      .catch((e) => {
        if ((e as { code?: number }).code !== 409) throw e;
      });
    const sockDir = join(nodelet.rootDir, 'plugins', DRIVER);
    mkdirSync(sockDir, { recursive: true });
    driver = await startHostpathPlugin({ nodeId: nodeName, stateDir, endpointSocket: join(sockDir, 'csi.sock'), maxVolumesPerNode: 10 });
    await eventually('default service account', () => k.core.readNamespacedServiceAccount({ name: 'default', namespace: ns }));
  });

  afterAll(async () => {
    await registrar?.stop();
    await driver?.stop();
    await nodelet?.dispose();
    await reg?.stop();
  });

  it('registers the driver: CSINode owned by the Node with nodeID, topology key and allocatable; nodeid annotation and topology label', async () => {
    const ms = await startRegistrar();
    console.log(`[csi] registration socket created → CSINode updated: ${ms} ms`);
    const node = await k.core.readNode({ name: nodeName });
    const csiNode = await k.storage.readCSINode({ name: nodeName });
    expect(csiNode.metadata?.ownerReferences).toEqual([expect.objectContaining({ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: node.metadata?.uid })]);
    expect(await csiNodeDriver()).toEqual({ name: DRIVER, nodeID: nodeName, topologyKeys: [HOSTPATH_TOPOLOGY_KEY], allocatable: { count: 10 } });
    expect(JSON.parse(node.metadata?.annotations?.['csi.volume.kubernetes.io/nodeid'] ?? '{}')).toEqual({ [DRIVER]: nodeName });
    expect(node.metadata?.labels?.[HOSTPATH_TOPOLOGY_KEY]).toBe(nodeName);
    expect(registrar!.peer.proc.exitCode).toBeNull();
  });

  it('killing the registrar deregisters the driver (CSINode entry and nodeid annotation gone, topology label kept as upstream); restarting it registers it again', async () => {
    await registrar!.stop();
    await eventually('driver gone from CSINode', async () => (await csiNodeDriver()) === undefined, 30_000, 100);
    const node = await eventually(
      'annotation gone',
      async () => {
        const n = await k.core.readNode({ name: nodeName });
        return n.metadata?.annotations?.['csi.volume.kubernetes.io/nodeid'] === undefined ? n : undefined;
      },
      10_000,
      100,
    );
    expect(node.metadata?.labels?.[HOSTPATH_TOPOLOGY_KEY]).toBe(nodeName);
    const ms = await startRegistrar();
    console.log(`[csi] re-registration: socket created → CSINode updated: ${ms} ms`);
    expect((await csiNodeDriver())?.nodeID).toBe(nodeName);
  });

  it('tells a plugin of an unknown type or an unsupported CSI version why it was refused', async () => {
    const bogus = await startFakePlugin(join(registryDir, 'bogus-reg.sock'), { type: 'BogusPlugin', name: 'bogus', versions: ['1.0.0'] });
    const old = await startFakePlugin(join(registryDir, 'old-reg.sock'), { type: 'CSIPlugin', name: 'old.csi.example.com', versions: ['0.3.0'] });
    try {
      const b = await eventually('bogus told', async () => bogus.statuses[0], 20_000, 100);
      expect(b).toEqual({
        plugin_registered: false,
        error: `RegisterPlugin error -- no handler registered for plugin type: BogusPlugin at socket ${join(registryDir, 'bogus-reg.sock')}`,
      });
      const o = await eventually('old told', async () => old.statuses[0], 20_000, 100);
      expect(o.plugin_registered).toBe(false);
      expect(o.error).toContain('RegisterPlugin error -- plugin validation failed with err: validation failed for CSI Driver old.csi.example.com');
      expect(o.error).toContain('None of the versions specified ["0.3.0"] are supported. err=highest supported version reported is 0.3.0, must be v1.x');
      expect((await k.storage.readCSINode({ name: nodeName })).spec?.drivers?.map((d) => d.name)).toEqual([DRIVER]);
    } finally {
      await bogus.stop();
      await old.stop();
    }
  });

  const createPod = (name: string, spec: Partial<V1PodSpec>) =>
    k.core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name }, spec: { nodeName, tolerations: [WASM_TOLERATION], restartPolicy: 'Never', containers: [], ...spec } as V1PodSpec },
    });
  const until = (name: string, what: string, ok: (p: V1Pod) => boolean, ms = 90_000) => podUntil(k.core, ns, name, what, ok, ms);
  const deleteAndWait = async (name: string) => {
    await k.core.deleteNamespacedPod({ name, namespace: ns });
    await eventually(
      `${name} gone`,
      async () =>
        await k.core.readNamespacedPod({ name, namespace: ns }).then(
          () => false,
          () => true,
        ),
      60_000,
      250,
    );
  };
  const logs = (name: string, container: string) => k.core.readNamespacedPodLog({ name, namespace: ns, container });

  it('an inline ephemeral volume: an init container writes, the main container reads; unmounted once the pod Succeeded, before its deletion', async () => {
    await createPod('inline', {
      volumes: [{ name: 'scratch', csi: { driver: DRIVER } }],
      initContainers: [
        {
          name: 'writer',
          image: img['write-file'],
          args: ['/data/hello.txt', 'hello from an ephemeral CSI volume'],
          volumeMounts: [{ name: 'scratch', mountPath: '/data' }],
        },
      ],
      containers: [
        { name: 'reader', image: img['read-file'], args: ['/data/hello.txt'], volumeMounts: [{ name: 'scratch', mountPath: '/data', readOnly: true }] },
      ],
    });
    const pod = await until('inline', 'Succeeded', (p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed');
    expect(await logs('inline', 'reader')).toContain('content /data/hello.txt: hello from an ephemeral CSI volume');
    expect(pod.status?.phase).toBe('Succeeded');
    // Upstream syncTerminatedPod: a finished pod's volumes are torn down without waiting for its deletion.
    await eventually('unmounted after Succeeded', async () => mountsUnder(nodelet.rootDir).length === 0, 30_000, 200);
    expect((await k.core.readNamespacedPod({ name: 'inline', namespace: ns })).metadata?.uid).toBe(pod.metadata!.uid);
    await deleteAndWait('inline');
    expect(mountsUnder(nodelet.rootDir)).toEqual([]);
  });

  it('a PV/PVC of the driver: a pod writes and Succeeds (unpublished and unstaged before its deletion), a second pod reads the same data', async () => {
    const pvName = `csi-pv-${ns}`;
    // The handle comes from the driver's Controller.CreateVolume, as external-provisioner would get it.
    const handle = await createBoundCsiClaim(k.core, {
      namespace: ns,
      pvName,
      claimName: 'data',
      driver: DRIVER,
      volumeHandle: { controllerSocket: driver.endpointSocket },
      volumeAttributes: { origin: 'e2e' },
    });
    expect(existsSync(join(stateDir, handle))).toBe(true);
    const vol = [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }];
    await createPod('writer', {
      volumes: vol,
      containers: [{ name: 'w', image: img['write-file'], args: ['/d/kept.txt', 'persistent bytes'], volumeMounts: [{ name: 'd', mountPath: '/d' }] }],
    });
    const w = await until('writer', 'Succeeded', (p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed');
    expect(await logs('writer', 'w')).toContain('wrote /d/kept.txt');
    const staging = join(nodelet.rootDir, 'plugins', 'kubernetes.io', 'csi', DRIVER, sha256Hex(handle));
    // The finished writer was its last user: NodeUnpublishVolume then NodeUnstageVolume, while its object still exists.
    await eventually('writer unmounted', async () => mountsUnder(nodelet.rootDir).length === 0, 30_000, 200);
    await eventually('unstaged after the writer Succeeded', async () => !existsSync(staging), 15_000, 200);
    expect((await k.core.readNamespacedPod({ name: 'writer', namespace: ns })).metadata?.uid).toBe(w.metadata!.uid);
    await deleteAndWait('writer');
    await createPod('reader', {
      volumes: vol,
      containers: [{ name: 'r', image: img['read-file'], args: ['/d/kept.txt'], volumeMounts: [{ name: 'd', mountPath: '/d' }] }],
    });
    await until('reader', 'Succeeded', (p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed');
    expect(await logs('reader', 'r')).toContain('content /d/kept.txt: persistent bytes');
    await eventually('reader unmounted', async () => mountsUnder(nodelet.rootDir).length === 0, 30_000, 200);
    // NodeUnstageVolume follows the last NodeUnpublishVolume; the staging dir goes with it.
    await eventually('volume unstaged', async () => !existsSync(staging), 15_000, 200);
    await deleteAndWait('reader');
    expect(mountsUnder(nodelet.rootDir)).toEqual([]);
  });

  it("fsGroupPolicy File on a driver without VOLUME_MOUNT_GROUP: nodelet gives the published tree the pod's fsGroup (group, g+rw, setgid dirs)", async () => {
    const handle = await createBoundCsiClaim(k.core, {
      namespace: ns,
      pvName: `csi-pv-fsgroup-${ns}`,
      claimName: 'fsgroup',
      driver: DRIVER,
      volumeHandle: { controllerSocket: driver.endpointSocket },
    });
    await createPod('fsgroup', {
      securityContext: { fsGroup: 4321 },
      volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'fsgroup' } }],
      containers: [{ name: 'w', image: img['write-file'], args: ['/d/owned.txt', 'x'], volumeMounts: [{ name: 'd', mountPath: '/d' }] }],
    });
    await until('fsgroup', 'Succeeded', (p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed');
    const root = statSync(join(stateDir, handle));
    expect([root.gid, root.mode & 0o2070]).toEqual([4321, 0o2070]);
    await deleteAndWait('fsgroup');
  });

  it('a volume of an unregistered driver: FailedMount event with upstream wording, pod stays ContainerCreating', async () => {
    await createPod('nodriver', {
      volumes: [{ name: 'x', csi: { driver: 'missing.csi.example.com' } }],
      containers: [{ name: 'm', image: img['read-file'], args: ['/x/f'], volumeMounts: [{ name: 'x', mountPath: '/x' }] }],
    });
    const ev = await eventually(
      'FailedMount event',
      async () => {
        const list = await k.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=nodriver' });
        return list.items.find((e) => e.reason === 'FailedMount');
      },
      60_000,
      250,
    );
    expect(ev.type).toBe('Warning');
    expect(ev.message).toBe(
      'MountVolume.SetUp failed for volume "x" : kubernetes.io/csi: mounter.SetUpAt failed to get CSI client: driver name missing.csi.example.com not found in the list of registered CSI drivers',
    );
    const p = await until('nodriver', 'ContainerCreating', (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ContainerCreating');
    expect(p.status?.phase).toBe('Pending');
    await deleteAndWait('nodriver');
  });

  it("a PV whose handle the driver never created: NodeStageVolume's NotFound is the FailedMount message; the pod stays ContainerCreating", async () => {
    await createBoundCsiClaim(k.core, { namespace: ns, pvName: `csi-pv-unknown-${ns}`, claimName: 'unknown', driver: DRIVER, volumeHandle: 'no-such-volume' });
    await createPod('unknown', {
      volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'unknown' } }],
      containers: [{ name: 'm', image: img['read-file'], args: ['/d/f'], volumeMounts: [{ name: 'd', mountPath: '/d' }] }],
    });
    const ev = await eventually(
      'FailedMount event',
      async () => {
        const list = await k.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=unknown' });
        return list.items.find((e) => e.reason === 'FailedMount');
      },
      60_000,
      250,
    );
    expect(ev.message).toBe(
      'MountVolume.SetUp failed for volume "d" : rpc error: code = NotFound desc = volume id no-such-volume does not exist in the volumes list',
    );
    await deleteAndWait('unknown');
  });

  it('the driver refuses NodePublishVolume of a volume not staged at that path (FailedPrecondition), as the upstream hostpath driver', async () => {
    const id = await createCsiVolume(driver.endpointSocket, `direct-${ns}`, 1024);
    const Node = loadCsi().Node;
    const c = new Node(unixTarget(driver.endpointSocket), grpc.credentials.createInsecure());
    try {
      const err = await new Promise<grpc.ServiceError | null>((resolve) =>
        c.NodePublishVolume(
          {
            volume_id: id,
            staging_target_path: join(nodelet.rootDir, 'never-staged'),
            target_path: join(nodelet.rootDir, 'never-published'),
            volume_capability: { mount: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } },
          },
          (e) => resolve(e),
        ),
      );
      expect(err?.code).toBe(grpc.status.FAILED_PRECONDITION);
    } finally {
      c.close();
    }
    expect(mountsUnder(nodelet.rootDir)).toEqual([]);
  });

  it('a pod deleted while nodelet was down: at start its volume is unpublished and unstaged (refcounts recovered from disk)', async () => {
    const pvName = `csi-pv2-${ns}`;
    const handle = await createBoundCsiClaim(k.core, {
      namespace: ns,
      pvName,
      claimName: 'data2',
      driver: DRIVER,
      volumeHandle: { controllerSocket: driver.endpointSocket },
    });
    await createPod('long', {
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 1,
      volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data2' } }],
      containers: [{ name: 's', image: img.sleep, args: ['3600'], volumeMounts: [{ name: 'd', mountPath: '/d' }] }],
    });
    const pod = await until('long', 'Running', (p) => p.status?.phase === 'Running');
    const target = join(nodelet.rootDir, 'pods', pod.metadata!.uid!, 'volumes', 'kubernetes.io~csi', pvName, 'mount');
    // The running pod's other volumes (its projected token on tmpfs) are mounts too: count the CSI ones.
    const csiMounts = () => mountsUnder(nodelet.rootDir).filter((m) => m.includes('/kubernetes.io~csi/'));
    expect(csiMounts()).toEqual([target]);
    expect(await nodelet.stop()).toBe(0);
    expect(csiMounts()).toEqual([target]);
    await k.core.deleteNamespacedPod({ name: 'long', namespace: ns, gracePeriodSeconds: 0 });
    await nodelet.restart();
    await eventually('mount gone after restart', async () => mountsUnder(nodelet.rootDir).length === 0, 60_000, 250);
    await eventually('unstaged', async () => !existsSync(join(nodelet.rootDir, 'plugins', 'kubernetes.io', 'csi', DRIVER, sha256Hex(handle))), 10_000, 100);
    // The pod dir goes right after its volumes' tear-down (which ends with the unstage).
    await eventually('pod dir removed', async () => !existsSync(join(nodelet.rootDir, 'pods', pod.metadata!.uid!)), 10_000, 100);
    expect(existsSync(join(stateDir, handle))).toBe(true);
  });
});

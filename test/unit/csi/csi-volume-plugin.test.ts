// The kubernetes.io/csi volume plugin through prepareVolumes/teardownVolumes,
// against a fake CSI Node service (no real mounts) and fake API reads.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { V1CSIDriver, V1PersistentVolume, V1PersistentVolumeClaim, V1Pod, V1Volume, V1VolumeAttachment } from '@kubernetes/client-node';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseGenericVersion } from '../../../core/pluginmanager/csi-versions.ts';
import { CsiDriverRegistry } from '../../../core/volumes/csi/csi-driver-registry.ts';
import { attachmentName, inlineVolumeHandle, sha256Hex } from '../../../core/volumes/csi/csi-paths.ts';
import { CsiVolumePlugin } from '../../../core/volumes/csi/csi-volume-plugin.ts';
import { StageRefs } from '../../../core/volumes/csi/stage-refs.ts';
import type { CsiVolumeApi } from '../../../core/volumes/csi/volume-api.ts';
import { failedMountMessage, prepareVolumes, teardownVolumes, volumeFailures } from '../../../core/volumes/prepare.ts';
import { VolumePluginRegistry } from '../../../core/volumes/plugin-registry.ts';
import { startFakeCsiNode, type FakeCsiNode } from './fake-csi-node.ts';

const log = pino({ level: 'silent' });
const DRIVER = 'fake.csi.k8s.io';

class FakeApi implements CsiVolumeApi {
  csiDrivers = new Map<string, V1CSIDriver>();
  pvcs = new Map<string, V1PersistentVolumeClaim>();
  pvs = new Map<string, V1PersistentVolume>();
  attachments = new Map<string, V1VolumeAttachment>();
  reads = 0;
  async readPVC(ns: string, name: string) {
    this.reads++;
    const c = this.pvcs.get(`${ns}/${name}`);
    if (!c) throw new Error(`persistentvolumeclaims "${name}" not found`);
    return c;
  }
  async readPV(name: string) {
    this.reads++;
    const v = this.pvs.get(name);
    if (!v) throw new Error(`persistentvolumes "${name}" not found`);
    return v;
  }
  async readCSIDriver(name: string) {
    this.reads++;
    return this.csiDrivers.get(name);
  }
  async readVolumeAttachment(name: string) {
    this.reads++;
    const a = this.attachments.get(name);
    if (!a) throw new Error(`volumeattachments.storage.k8s.io "${name}" not found`);
    return a;
  }
}

let root: string;
let fake: FakeCsiNode;
let drivers: CsiDriverRegistry;
let refs: StageRefs;
let api: FakeApi;
let registry: VolumePluginRegistry;

const podsDir = () => join(root, 'pods');
const pluginsDir = () => join(root, 'plugins');
const podDir = (uid: string) => join(podsDir(), uid);

function pod(uid: string, volumes: V1Volume[]): V1Pod {
  return { metadata: { name: `p-${uid.slice(0, 4)}`, namespace: 'ns1', uid }, spec: { serviceAccountName: 'sa1', containers: [{ name: 'c' }], volumes } };
}

function newPlugin(r = refs): CsiVolumePlugin {
  return new CsiVolumePlugin({ drivers, refs: r, pluginsDir: pluginsDir(), nodeName: 'n1', api, log, driverWaitMs: 50, statsPeriodMs: 60_000 });
}

async function prepare(p: V1Pod) {
  return prepareVolumes(p, {
    podDir: podDir(p.metadata!.uid!),
    source: {
      getConfigMap: async () => undefined,
      getSecret: async () => undefined,
      requestServiceAccountToken: async () => {
        throw new Error('no');
      },
    },
    nodeName: 'n1',
    hostIP: '127.0.0.1',
    log: log as never,
    plugins: registry,
  });
}

async function failureOf(p: V1Pod): Promise<string> {
  const e = await prepare(p).then(
    () => undefined,
    (err: unknown) => err,
  );
  return volumeFailures(e)!.map(failedMountMessage).join('\n');
}

function bindPVC(name: string, pvName: string, handle: string) {
  api.pvcs.set(`ns1/${name}`, { metadata: { name, namespace: 'ns1', uid: `uid-${name}` }, spec: { volumeName: pvName }, status: { phase: 'Bound' } });
  api.pvs.set(pvName, {
    metadata: { name: pvName },
    spec: {
      accessModes: ['ReadWriteOnce'],
      mountOptions: ['noatime'],
      claimRef: { uid: `uid-${name}` },
      csi: { driver: DRIVER, volumeHandle: handle, fsType: 'ext4', volumeAttributes: { k: 'v' } },
    },
  });
}

const UID_A = '11111111-1111-1111-1111-111111111111';
const UID_B = '22222222-2222-2222-2222-222222222222';
const inline: V1Volume = { name: 'scratch', csi: { driver: DRIVER, volumeAttributes: { size: '1Mi' } } };

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'ndl-csi-v-'));
  fake = await startFakeCsiNode(join(root, 'csi.sock'));
  drivers = new CsiDriverRegistry();
  await drivers.set({ name: DRIVER, endpoint: fake.socketPath, highestSupportedVersion: parseGenericVersion('1.0.0') });
  refs = new StageRefs();
  api = new FakeApi();
  api.csiDrivers.set(DRIVER, {
    metadata: { name: DRIVER },
    spec: { podInfoOnMount: true, attachRequired: false, volumeLifecycleModes: ['Persistent', 'Ephemeral'] },
  });
  registry = new VolumePluginRegistry([newPlugin()]);
});

afterEach(async () => {
  drivers.close();
  await fake.stop();
  await rm(root, { recursive: true, force: true });
});

describe('inline ephemeral volumes', () => {
  it('publishes into <podDir>/volumes/kubernetes.io~csi/<name>/mount with pod info, without staging, once', async () => {
    const p = pod(UID_A, [inline]);
    const prepared = await prepare(p);
    const target = join(podDir(UID_A), 'volumes', 'kubernetes.io~csi', 'scratch', 'mount');
    expect(prepared.get('scratch')).toMatchObject({ name: 'scratch', hostPath: target, readOnly: false, kind: 'csi' });
    expect(fake.callsOf('NodeStageVolume')).toHaveLength(0);
    const [pub] = fake.callsOf('NodePublishVolume');
    expect(pub).toMatchObject({
      volume_id: inlineVolumeHandle(UID_A, 'scratch'),
      target_path: target,
      staging_target_path: '',
      readonly: false,
      volume_capability: { mount: { fs_type: '', mount_flags: [] }, access_mode: { mode: 'SINGLE_NODE_WRITER' } },
      volume_context: {
        size: '1Mi',
        'csi.storage.k8s.io/pod.name': 'p-1111',
        'csi.storage.k8s.io/pod.namespace': 'ns1',
        'csi.storage.k8s.io/pod.uid': UID_A,
        'csi.storage.k8s.io/serviceAccount.name': 'sa1',
        'csi.storage.k8s.io/ephemeral': 'true',
      },
    });
    expect(inlineVolumeHandle(UID_A, 'scratch')).toBe(`csi-${sha256Hex(`${UID_A}scratch`)}`);
    const volData = JSON.parse(await readFile(join(target, '..', 'vol_data.json'), 'utf8'));
    expect(volData).toMatchObject({ specVolID: 'scratch', driverName: DRIVER, volumeLifecycleMode: 'Ephemeral', nodeName: 'n1' });
    const calls = fake.calls.length;
    const reads = api.reads;
    await prepare(p);
    expect(fake.calls.length).toBe(calls);
    expect(api.reads).toBe(reads);
  });

  it('leaves pod info out when the CSIDriver does not ask for it', async () => {
    api.csiDrivers.get(DRIVER)!.spec!.podInfoOnMount = false;
    await prepare(pod(UID_A, [inline]));
    expect(fake.callsOf('NodePublishVolume')[0]!.volume_context).toEqual({ size: '1Mi' });
  });

  it('tears down with NodeUnpublishVolume and removes the volume dir', async () => {
    await prepare(pod(UID_A, [inline]));
    await teardownVolumes(podDir(UID_A), { plugins: registry });
    expect(fake.callsOf('NodeUnpublishVolume')).toEqual([
      { volume_id: inlineVolumeHandle(UID_A, 'scratch'), target_path: join(podDir(UID_A), 'volumes', 'kubernetes.io~csi', 'scratch', 'mount') },
    ]);
    expect(existsSync(join(podDir(UID_A), 'volumes'))).toBe(false);
  });

  it('refuses a driver whose CSIDriver lacks Ephemeral, or has no CSIDriver, with upstream messages', async () => {
    api.csiDrivers.get(DRIVER)!.spec!.volumeLifecycleModes = ['Persistent'];
    expect(await failureOf(pod(UID_A, [inline]))).toBe(
      `MountVolume.SetUp failed for volume "scratch" : kubernetes.io/csi: mounter.SetupAt failed to check volume lifecycle mode: volume mode "Ephemeral" not supported by driver ${DRIVER} (only supports ["Persistent"])`,
    );
    api.csiDrivers.clear();
    expect(await failureOf(pod(UID_B, [inline]))).toContain(`volume mode "Ephemeral" not supported by driver ${DRIVER} (no CSIDriver object)`);
    expect(fake.callsOf('NodePublishVolume')).toHaveLength(0);
  });

  it('reports an unregistered driver and a failing NodePublishVolume like upstream', async () => {
    const other: V1Volume = { name: 'x', csi: { driver: 'missing.csi' } };
    expect(await failureOf(pod(UID_A, [other]))).toBe(
      'MountVolume.SetUp failed for volume "x" : kubernetes.io/csi: mounter.SetUpAt failed to get CSI client: driver name missing.csi not found in the list of registered CSI drivers',
    );
    fake.failures.set('NodePublishVolume', { code: grpc.status.INTERNAL, details: 'boom' });
    expect(await failureOf(pod(UID_B, [inline]))).toBe('MountVolume.SetUp failed for volume "scratch" : rpc error: code = Internal desc = boom');
    fake.failures.clear();
    await prepare(pod(UID_B, [inline]));
    expect(fake.callsOf('NodePublishVolume')).toHaveLength(2);
  });
});

describe('persistent volumes (PVC → PV with spec.csi)', () => {
  it('stages once per node, publishes per pod, unstages after the last pod', async () => {
    bindPVC('data', 'pv-1', 'vol-123');
    const vol: V1Volume = { name: 'd', persistentVolumeClaim: { claimName: 'data' } };
    const a = await prepare(pod(UID_A, [vol]));
    await prepare(pod(UID_B, [vol]));
    const staging = join(pluginsDir(), 'kubernetes.io', 'csi', DRIVER, sha256Hex('vol-123'), 'globalmount');
    const stages = fake.callsOf('NodeStageVolume');
    expect(stages).toHaveLength(1);
    expect(stages[0]).toMatchObject({
      volume_id: 'vol-123',
      staging_target_path: staging,
      publish_context: {},
      volume_capability: { mount: { fs_type: 'ext4', mount_flags: ['noatime'] }, access_mode: { mode: 'SINGLE_NODE_WRITER' } },
    });
    // Staging gets the PV's attributes only (upstream MountDevice); the pod info comes at publish.
    expect(stages[0]!.volume_context).toEqual({ k: 'v' });
    expect(fake.callsOf('NodePublishVolume')[0]!.volume_context).toMatchObject({ k: 'v', 'csi.storage.k8s.io/ephemeral': 'false' });
    expect(a.get('d')).toMatchObject({ kind: 'persistentVolumeClaim', hostPath: join(podDir(UID_A), 'volumes', 'kubernetes.io~csi', 'pv-1', 'mount') });
    expect(fake.callsOf('NodePublishVolume').map((c) => c.staging_target_path)).toEqual([staging, staging]);
    await teardownVolumes(podDir(UID_A), { plugins: registry });
    expect(fake.callsOf('NodeUnstageVolume')).toHaveLength(0);
    await teardownVolumes(podDir(UID_B), { plugins: registry });
    expect(fake.callsOf('NodeUnstageVolume')).toEqual([{ volume_id: 'vol-123', staging_target_path: staging }]);
    expect(existsSync(join(pluginsDir(), 'kubernetes.io', 'csi', DRIVER, sha256Hex('vol-123')))).toBe(false);
  });

  it('NodeStageVolume failing with a final error (Internal): nothing stays staged; retried at the next set-up; a pod deleted meanwhile is neither unpublished nor unstaged', async () => {
    bindPVC('data', 'pv-1', 'vol-9');
    const vol: V1Volume = { name: 'd', persistentVolumeClaim: { claimName: 'data' } };
    const dataDir = join(pluginsDir(), 'kubernetes.io', 'csi', DRIVER, sha256Hex('vol-9'));
    fake.failures.set('NodeStageVolume', { code: grpc.status.INTERNAL, details: 'injected' });
    expect(await failureOf(pod(UID_A, [vol]))).toBe('MountVolume.SetUp failed for volume "d" : rpc error: code = Internal desc = injected');
    expect(await failureOf(pod(UID_A, [vol]))).toContain('Internal');
    expect(fake.callsOf('NodeStageVolume')).toHaveLength(2);
    expect(fake.callsOf('NodePublishVolume')).toHaveLength(0);
    // Upstream MountDevice removes the staging dir after a final error.
    expect(existsSync(dataDir)).toBe(false);
    await teardownVolumes(podDir(UID_A), { plugins: registry });
    expect(fake.callsOf('NodeUnpublishVolume')).toHaveLength(0);
    expect(fake.callsOf('NodeUnstageVolume')).toHaveLength(0);
  });

  it("NodeStageVolume failing with a non-final error (Unavailable): uncertain, so the deleted pod's tear-down unstages (no unpublish); a later success publishes", async () => {
    bindPVC('data', 'pv-1', 'vol-8');
    const vol: V1Volume = { name: 'd', persistentVolumeClaim: { claimName: 'data' } };
    const staging = join(pluginsDir(), 'kubernetes.io', 'csi', DRIVER, sha256Hex('vol-8'), 'globalmount');
    fake.failures.set('NodeStageVolume', { code: grpc.status.UNAVAILABLE, details: 'injected' });
    expect(await failureOf(pod(UID_A, [vol]))).toBe('MountVolume.SetUp failed for volume "d" : rpc error: code = Unavailable desc = injected');
    expect(existsSync(staging)).toBe(true);
    await teardownVolumes(podDir(UID_A), { plugins: registry });
    expect(fake.callsOf('NodeUnpublishVolume')).toHaveLength(0);
    expect(fake.callsOf('NodeUnstageVolume')).toEqual([{ volume_id: 'vol-8', staging_target_path: staging }]);
    expect(existsSync(staging)).toBe(false);
    fake.failures.clear();
    await prepare(pod(UID_B, [vol]));
    expect(fake.callsOf('NodeStageVolume')).toHaveLength(2);
    expect(fake.callsOf('NodePublishVolume')).toHaveLength(1);
    await teardownVolumes(podDir(UID_B), { plugins: registry });
    expect(fake.callsOf('NodeUnpublishVolume')).toHaveLength(1);
    expect(fake.callsOf('NodeUnstageVolume')).toHaveLength(2);
  });

  it('skips staging for drivers without STAGE_UNSTAGE_VOLUME and maps RWO to SINGLE_NODE_MULTI_WRITER when offered', async () => {
    fake.capabilities = ['SINGLE_NODE_MULTI_WRITER'];
    bindPVC('data', 'pv-1', 'vol-1');
    await prepare(pod(UID_A, [{ name: 'd', persistentVolumeClaim: { claimName: 'data', readOnly: true } }]));
    expect(fake.callsOf('NodeStageVolume')).toHaveLength(0);
    expect(fake.callsOf('NodePublishVolume')[0]).toMatchObject({ readonly: true, volume_capability: { access_mode: { mode: 'SINGLE_NODE_MULTI_WRITER' } } });
  });

  it('uses the VolumeAttachment publish context when attach is required', async () => {
    api.csiDrivers.get(DRIVER)!.spec!.attachRequired = true;
    bindPVC('data', 'pv-1', 'vol-1');
    const vol: V1Volume = { name: 'd', persistentVolumeClaim: { claimName: 'data' } };
    const va = attachmentName('vol-1', DRIVER, 'n1');
    expect(await failureOf(pod(UID_A, [vol]))).toBe(
      `MountVolume.SetUp failed for volume "d" : kubernetes.io/csi: mounter.SetUpAt failed to fetch publishContext: volumeattachments.storage.k8s.io "${va}" not found`,
    );
    api.attachments.set(va, { metadata: { name: va }, spec: {} as never, status: { attached: true, attachmentMetadata: { dev: '/dev/x' } } });
    await prepare(pod(UID_B, [vol]));
    expect(fake.callsOf('NodeStageVolume')[0]!.publish_context).toEqual({ dev: '/dev/x' });
  });

  it('explains unbound claims, missing claims and non-CSI PVs', async () => {
    api.pvcs.set('ns1/pending', { metadata: { name: 'pending', uid: 'u' }, spec: {}, status: { phase: 'Pending' } });
    expect(await failureOf(pod(UID_A, [{ name: 'd', persistentVolumeClaim: { claimName: 'pending' } }]))).toBe(
      'MountVolume.SetUp failed for volume "d" : PVC ns1/pending has non-bound phase ("Pending") or empty pvc.Spec.VolumeName ("")',
    );
    expect(await failureOf(pod(UID_A, [{ name: 'd', persistentVolumeClaim: { claimName: 'nope' } }]))).toBe(
      'MountVolume.SetUp failed for volume "d" : error processing PVC ns1/nope: failed to fetch PVC from API server: persistentvolumeclaims "nope" not found',
    );
    bindPVC('hp', 'pv-hp', 'h');
    delete api.pvs.get('pv-hp')!.spec!.csi;
    expect(await failureOf(pod(UID_A, [{ name: 'd', persistentVolumeClaim: { claimName: 'hp' } }]))).toContain(
      'PV pv-hp bound to PVC ns1/hp is not a CSI volume',
    );
  });

  it('recovers users and staged volumes from disk after a restart', async () => {
    bindPVC('data', 'pv-1', 'vol-9');
    const vol: V1Volume = { name: 'd', persistentVolumeClaim: { claimName: 'data' } };
    await prepare(pod(UID_A, [vol]));
    await prepare(pod(UID_B, [vol]));
    // A new nodelet: fresh plugin, refcounts rebuilt from the pod dirs and the staging trace.
    const recovered = new StageRefs();
    await recovered.recover(podsDir(), pluginsDir());
    const staging = join(pluginsDir(), 'kubernetes.io', 'csi', DRIVER, sha256Hex('vol-9'), 'globalmount');
    expect(recovered.users(staging)).toBe(2);
    expect(recovered.isStaged(staging)).toBe(true);
    registry = new VolumePluginRegistry([newPlugin(recovered)]);
    await teardownVolumes(podDir(UID_A), { plugins: registry });
    expect(fake.callsOf('NodeUnstageVolume')).toHaveLength(0);
    await teardownVolumes(podDir(UID_B), { plugins: registry });
    expect(fake.callsOf('NodeUnstageVolume')).toHaveLength(1);
  });

  it('unstages orphaned staged volumes when their driver registers', async () => {
    bindPVC('data', 'pv-1', 'vol-o');
    await prepare(pod(UID_A, [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }]));
    await rm(podDir(UID_A), { recursive: true }); // the pod vanished while nodelet was down
    const recovered = new StageRefs();
    await recovered.recover(podsDir(), pluginsDir());
    await newPlugin(recovered).unstageOrphans(DRIVER);
    expect(fake.callsOf('NodeUnstageVolume').map((c) => c.volume_id)).toEqual(['vol-o']);
    expect(recovered.orphans(DRIVER)).toEqual([]);
  });
});

describe('tear-down safety', () => {
  it('keeps the volume dir when NodeUnpublishVolume fails', async () => {
    await prepare(pod(UID_A, [inline]));
    fake.failures.set('NodeUnpublishVolume', { code: grpc.status.INTERNAL, details: 'busy' });
    await expect(teardownVolumes(podDir(UID_A), { plugins: registry })).rejects.toThrow(
      'kubernetes.io/csi: Unmounter.TearDownAt failed: rpc error: code = Internal desc = busy',
    );
    expect(existsSync(join(podDir(UID_A), 'volumes', 'kubernetes.io~csi', 'scratch', 'vol_data.json'))).toBe(true);
  });

  it('cleans up a never-mounted volume of a driver that is gone', async () => {
    fake.failures.set('NodePublishVolume', { code: grpc.status.INTERNAL, details: 'no' });
    await prepare(pod(UID_A, [inline])).catch(() => undefined);
    drivers.delete(DRIVER);
    await teardownVolumes(podDir(UID_A), { plugins: registry });
    expect(existsSync(join(podDir(UID_A), 'volumes'))).toBe(false);
  });
});

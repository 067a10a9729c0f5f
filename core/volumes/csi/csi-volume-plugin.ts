/**
 * The CSI volume plugin (`kubernetes.io/csi`): inline ephemeral volumes
 * (`volumes[].csi`) and PVCs bound to CSI PVs, mounted by the driver.
 *
 *   setUp (once per pod volume; later calls return the cached result)
 *     resolve spec (PVC → PV) → driver client → CSIDriver (lifecycle mode,
 *     podInfoOnMount, attachRequired) → NodeGetCapabilities
 *     → <vol>/vol_data.json → [Persistent + STAGE_UNSTAGE: stage once per node]
 *     → NodePublishVolume(<vol>/mount) → [fsGroup applies and the driver cannot:
 *     set ownership, fs-group.ts] → PreparedVolume{hostPath: <vol>/mount}
 *     (NodeStage failed, or NodePublish failed with a final error: vol_data.json
 *      says notPublished; an uncertain NodeStage keeps its staging trace)
 *   tearDown
 *     <vol>/vol_data.json → [published] NodeUnpublishVolume → <vol>/mount not a mount point
 *     → [Persistent: last user of the staging path → NodeUnstageVolume]
 *
 * Operations on one volume (driver + handle) are serialised. Messages are
 * upstream's; core prefixes `MountVolume.SetUp failed for volume "x" : `.
 */
import { mkdir } from 'node:fs/promises';
import type { V1CSIDriver, V1Volume } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import type { NodeClient } from '../../../sockets/csi.ts';
import { errorDetail, nodeletError } from '../../errors/index.ts';
import { volumeDirFor } from '../plugin-registry.ts';
import type { PreparedVolume, TearDownContext, VolumeContext, VolumePlugin } from '../types.ts';
import type { CsiDriverRegistry } from './csi-driver-registry.ts';
import { isFinalCsiError, nodeGetCapabilities, nodePublishVolume, nodeUnpublishVolume } from './csi-node-calls.ts';
import { attachmentName, CSI_PLUGIN_NAME, csiLog, publishTargetPath, stagingTargetPath } from './csi-paths.ts';
import { isStaged, stageVolume, unstageVolume } from './csi-staging.ts';
import { fsGroupAction, setVolumeOwnership } from './fs-group.ts';
import { KeyedLock } from './keyed-lock.ts';
import { isMountPoint } from './mount-info.ts';
import type { StageRefs } from './stage-refs.ts';
import type { CsiVolumeApi } from './volume-api.ts';
import { checkLifecycleMode, secretsOf, volumeCapability } from './mount-inputs.ts';
import { isCsiCandidate, podInfoAttributes, resolveCsiVolume, type CsiVolumeSpec } from './volume-spec.ts';
import { loadVolData, saveVolData, type VolData } from './vol-data.ts';
import { readVolumeUsage, type CsiVolumeUsage, type PublishedVolume } from './volume-stats.ts';
import { VolumeStatsCache } from './volume-stats-cache.ts';

/** How long one NodeGetVolumeStats may take before a scrape goes on without it. */
const STATS_TIMEOUT_MS = 10_000;

/** Options of {@link CsiVolumePlugin}. */
export interface CsiVolumePluginOptions {
  readonly drivers: CsiDriverRegistry;
  readonly refs: StageRefs;
  /** `<rootDir>/plugins`. */
  readonly pluginsDir: string;
  readonly nodeName: string;
  /** Absent in standalone mode: every CSI volume then fails with upstream's message. */
  readonly api?: CsiVolumeApi;
  readonly log: Logger;
  /** How long tear-down waits for a driver that is not (yet) registered while its mount exists. Default 15 s. */
  readonly driverWaitMs?: number;
  /** `--volume-stats-agg-period`: how long a volume's usage is kept (negative: none is read). */
  readonly statsPeriodMs: number;
}

/** The `kubernetes.io/csi` volume plugin. */
export class CsiVolumePlugin implements VolumePlugin {
  readonly pluginName = CSI_PLUGIN_NAME;
  private readonly locks = new KeyedLock();
  /** `<podDir>\0<volume name>` → prepared volume, its dir and what the stats reader needs. */
  private readonly prepared = new Map<string, { volume: PreparedVolume; volumeDir: string; published: PublishedVolume }>();

  private readonly stats: VolumeStatsCache;

  constructor(private readonly o: CsiVolumePluginOptions) {
    this.stats = new VolumeStatsCache(o.statsPeriodMs);
  }

  canSupport(volume: V1Volume): boolean {
    return isCsiCandidate(volume);
  }

  async setUp(volume: V1Volume, ctx: VolumeContext): Promise<PreparedVolume> {
    const key = `${ctx.podDir}\0${volume.name}`;
    const cached = this.prepared.get(key);
    if (cached) return cached.volume;
    if (!this.o.api) throw nodeletError('NDL_CSI_DRIVER', csiLog('failed to get a kubernetes client'));
    const spec = await resolveCsiVolume(volume, ctx.pod, this.o.api);
    const volumeDir = volumeDirFor(ctx.podDir, CSI_PLUGIN_NAME, spec.specName);
    const target = publishTargetPath(volumeDir);
    const staging = await this.locks.run(lockKey(spec.driver, spec.volumeHandle), () => this.mount(spec, ctx, volumeDir, target));
    const prepared: PreparedVolume = { name: volume.name, hostPath: target, readOnly: spec.readOnly, kind: volume.csi ? 'csi' : 'persistentVolumeClaim' };
    const m = ctx.pod.metadata!;
    const published: PublishedVolume = {
      podUid: m.uid!,
      podNamespace: m.namespace!,
      podName: m.name!,
      name: volume.name,
      pvcName: volume.persistentVolumeClaim?.claimName,
      driver: spec.driver,
      volumeHandle: spec.volumeHandle,
      target,
      staging,
    };
    this.prepared.set(key, { volume: prepared, volumeDir, published });
    return prepared;
  }

  /**
   * The usage of every published volume whose driver offers GET_VOLUME_STATS
   * (NodeGetVolumeStats, upstream's CSI metrics provider); a volume whose call
   * fails is left out and logged at debug level.
   */
  async volumeStats(): Promise<CsiVolumeUsage[]> {
    if (!this.stats.enabled) return [];
    const all = await Promise.all(
      [...this.prepared].map(async ([key, { published: v }]) => {
        if (!this.o.drivers.get(v.driver)) return undefined;
        try {
          return await this.stats.get(key, () => readVolumeUsage(this.o.drivers.nodeClient(v.driver), v, STATS_TIMEOUT_MS));
        } catch (e) {
          this.o.log.debug({ err: e, driver: v.driver, volumeHandle: v.volumeHandle, pod: `${v.podNamespace}/${v.podName}` }, 'NodeGetVolumeStats failed');
          return undefined;
        }
      }),
    );
    return all.filter((u): u is CsiVolumeUsage => u !== undefined);
  }

  async tearDown(volumeName: string, ctx: TearDownContext): Promise<void> {
    for (const [k, v] of this.prepared)
      if (v.volumeDir === ctx.volumeDir) {
        this.prepared.delete(k);
        this.stats.forget(k);
      }
    const target = publishTargetPath(ctx.volumeDir);
    const data = await loadVolData(ctx.volumeDir);
    if (!data) {
      if (await isMountPoint(target))
        throw nodeletError('NDL_CSI_VOLUME', csiLog(`Unmounter.TearDownAt failed: ${target} is mounted but ${ctx.volumeDir} has no volume data`));
      return;
    }
    await this.locks.run(lockKey(data.driverName, data.volumeHandle), async () => {
      const client = await this.clientForTearDown(data.driverName, target);
      if (data.notPublished) this.o.log.debug({ volume: volumeName, driver: data.driverName }, csiLog('nothing was published: skipping NodeUnpublishVolume'));
      else if (client) await this.unpublish(client, data.volumeHandle, target);
      else this.o.log.warn({ volume: volumeName, driver: data.driverName }, csiLog('driver not registered and nothing mounted: skipping NodeUnpublishVolume'));
      if (data.volumeLifecycleMode === 'Persistent') await this.releaseStaging(client, data.driverName, data.volumeHandle, target);
    });
  }

  /** Unstages staged volumes of `driver` that no pod uses (after a restart); errors are logged. */
  async unstageOrphans(driver: string): Promise<void> {
    for (const v of this.o.refs.orphans(driver)) {
      await this.locks
        .run(lockKey(v.driver, v.volumeHandle), async () => {
          if (this.o.refs.users(v.stagingPath) > 0 || !this.o.refs.isStaged(v.stagingPath)) return; // re-used or unstaged meanwhile
          const client = this.o.drivers.nodeClient(driver);
          await unstageVolume(client, this.o.refs, this.o.pluginsDir, v.driver, v.volumeHandle);
          this.o.log.info({ driver, volumeHandle: v.volumeHandle }, 'unstaged an orphaned CSI volume');
        })
        .catch((e) => this.o.log.error({ err: e, driver, volumeHandle: v.volumeHandle }, 'unstaging an orphaned CSI volume failed'));
    }
  }

  /** Stages (when the driver stages) and publishes; returns the staging path ('' when not staged). */
  private async mount(spec: CsiVolumeSpec, ctx: VolumeContext, volumeDir: string, target: string): Promise<string> {
    const client = this.client(spec.driver, 'mounter.SetUpAt');
    const csiDriver = await this.o.api!.readCSIDriver(spec.driver).catch((e) => {
      throw nodeletError('NDL_CSI_VOLUME', csiLog(`mounter.SetupAt failed to check volume lifecycle mode: ${errorDetail(e)}`), e);
    });
    checkLifecycleMode(spec, csiDriver);
    const caps = await nodeGetCapabilities(client).catch((e) => {
      throw nodeletError('NDL_CSI_VOLUME', csiLog(`mounter.SetUpAt failed to check for STAGE_UNSTAGE_VOLUME capability: ${errorDetail(e)}`), e);
    });
    const capability = volumeCapability(spec, caps.has('SINGLE_NODE_MULTI_WRITER'));
    const publishContext = spec.mode === 'Persistent' ? await this.publishContext(spec, csiDriver) : {};
    const attributes = csiDriver?.spec?.podInfoOnMount ? { ...spec.attributes, ...podInfoAttributes(ctx.pod, spec.mode) } : { ...spec.attributes };
    await mkdir(volumeDir, { recursive: true, mode: 0o750 });
    const volData: VolData = {
      specVolID: spec.specName,
      volumeHandle: spec.volumeHandle,
      driverName: spec.driver,
      nodeName: this.o.nodeName,
      attachmentID: attachmentName(spec.volumeHandle, spec.driver, this.o.nodeName),
      volumeLifecycleMode: spec.mode,
    };
    await saveVolData(volumeDir, volData);
    // Nothing was published at the target: its tear-down skips NodeUnpublishVolume (the staging use stays, to be released).
    const notPublished = async (e: unknown): Promise<never> => {
      await saveVolData(volumeDir, { ...volData, notPublished: true });
      throw nodeletError('NDL_CSI_VOLUME', errorDetail(e), e);
    };
    let staging = '';
    if (spec.mode === 'Persistent' && caps.has('STAGE_UNSTAGE_VOLUME')) {
      staging = stagingTargetPath(this.o.pluginsDir, spec.driver, spec.volumeHandle);
      this.o.refs.addUser(staging, target);
      const secrets = await secretsOf(ctx, spec.stageSecretRef, 'NodeStageSecretRef');
      await stageVolume(client, this.o.refs, {
        pluginsDir: this.o.pluginsDir,
        driver: spec.driver,
        volumeHandle: spec.volumeHandle,
        capability,
        publishContext,
        secrets,
        // Upstream (csi_attacher.go MountDevice) stages with the PV's volumeAttributes only; pod info is added at publish.
        volumeContext: { ...spec.attributes },
      }).catch(notPublished);
    }
    const secrets = await secretsOf(ctx, spec.publishSecretRef, 'NodePublishSecretRef');
    const fsGroup = fsGroupAction(ctx.pod, spec, csiDriver, caps.has('VOLUME_MOUNT_GROUP'));
    await nodePublishVolume(client, {
      volume_id: spec.volumeHandle,
      publish_context: publishContext,
      staging_target_path: staging,
      target_path: target,
      volume_capability: fsGroup.kind === 'delegate' ? { ...capability, mount: { ...capability.mount, volume_mount_group: String(fsGroup.gid) } } : capability,
      readonly: spec.readOnly,
      secrets,
      volume_context: attributes,
    }).catch((e) => {
      // Upstream: a final error means nothing is mounted; any other leaves the mount uncertain (unpublished at tear-down).
      if (isFinalCsiError(e)) return notPublished(e);
      throw nodeletError('NDL_CSI_VOLUME', errorDetail(e), e);
    });
    if (fsGroup.kind === 'nodelet') {
      // Upstream: the mount stays (torn down with the pod); the pod cannot use it with the wrong ownership.
      await setVolumeOwnership(target, fsGroup.gid, fsGroup.onRootMismatch).catch((e) => {
        throw nodeletError('NDL_CSI_VOLUME', `applyFSGroup failed for vol ${spec.volumeHandle}: ${errorDetail(e)}`, e);
      });
    }
    this.o.log.debug({ driver: spec.driver, volumeHandle: spec.volumeHandle, target }, csiLog('mounter.SetUp successfully requested NodePublish'));
    return staging;
  }

  private client(driver: string, where: string): NodeClient {
    try {
      return this.o.drivers.nodeClient(driver);
    } catch (e) {
      throw nodeletError('NDL_CSI_DRIVER', csiLog(`${where} failed to get CSI client: ${errorDetail(e)}`), e);
    }
  }

  /** The driver's client; waits a while for it when something is mounted; undefined when nothing is mounted and no driver. */
  private async clientForTearDown(driver: string, target: string): Promise<NodeClient | undefined> {
    if (this.o.drivers.get(driver)) return this.o.drivers.nodeClient(driver);
    if (!(await isMountPoint(target))) return undefined;
    await this.o.drivers.waitFor(driver, this.o.driverWaitMs ?? 15_000);
    return this.client(driver, 'Unmounter.TearDownAt');
  }

  private async unpublish(client: NodeClient, volumeHandle: string, target: string): Promise<void> {
    await nodeUnpublishVolume(client, { volume_id: volumeHandle, target_path: target }).catch((e) => {
      throw nodeletError('NDL_CSI_VOLUME', csiLog(`Unmounter.TearDownAt failed: ${errorDetail(e)}`), e);
    });
    if (await isMountPoint(target)) {
      throw nodeletError('NDL_CSI_VOLUME', csiLog(`Unmounter.TearDownAt failed to clean mount dir [${target}]: still mounted after NodeUnpublishVolume`));
    }
  }

  /** Drops this target's use of the staging path; unstages when it was the last (failures are logged, retried at the next registration). */
  private async releaseStaging(client: NodeClient | undefined, driver: string, volumeHandle: string, target: string): Promise<void> {
    const staging = stagingTargetPath(this.o.pluginsDir, driver, volumeHandle);
    if (this.o.refs.removeUser(staging, target) > 0) return;
    if (!(await isStaged(this.o.refs, this.o.pluginsDir, driver, volumeHandle))) return;
    this.o.refs.markStaged({ driver, volumeHandle, stagingPath: staging });
    if (!client) return;
    await unstageVolume(client, this.o.refs, this.o.pluginsDir, driver, volumeHandle).catch((e) =>
      this.o.log.error({ err: e, driver, volumeHandle }, 'NodeUnstageVolume failed; will retry when the driver registers again'),
    );
  }

  private async publishContext(spec: CsiVolumeSpec, csiDriver: V1CSIDriver | undefined): Promise<Record<string, string>> {
    if (csiDriver?.spec?.attachRequired === false) return {};
    const name = attachmentName(spec.volumeHandle, spec.driver, this.o.nodeName);
    try {
      const va = await this.o.api!.readVolumeAttachment(name);
      if (!va.status?.attached) throw nodeletError('NDL_CSI_VOLUME', `volume ${spec.volumeHandle} has not been attached yet (VolumeAttachment ${name})`);
      return { ...va.status.attachmentMetadata };
    } catch (e) {
      throw nodeletError('NDL_CSI_VOLUME', csiLog(`mounter.SetUpAt failed to fetch publishContext: ${errorDetail(e)}`), e);
    }
  }
}

function lockKey(driver: string, handle: string): string {
  return `${driver}\0${handle}`;
}

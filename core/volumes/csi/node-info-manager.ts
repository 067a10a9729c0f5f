/**
 * Records a CSI driver's node information in the cluster, after upstream
 * `pkg/volume/csi/nodeinfomanager`:
 *
 *   install:   Node  ← annotation csi.volume.kubernetes.io/nodeid[driver] = nodeID
 *                      + topology labels (an existing different value is an error)
 *              CSINode (created owned by the Node if missing)
 *                    ← spec.drivers[driver] = {nodeID, topologyKeys, allocatable.count}
 *   uninstall: CSINode ← driver entry removed, with its allocatable.count
 *                        (the attach limit; the object stays, as upstream)
 *              Node    ← annotation key removed (the annotation when empty);
 *                        the driver's topology labels are kept, as upstream
 *                        (the scheduler's volume topology still sees them)
 *
 * Every read-modify-write is retried with upstream's back-off (4 tries,
 * 10 ms ×5, 10 % jitter); Node writes carry the read resourceVersion, so
 * concurrent writers conflict instead of losing updates.
 */
import type { V1CSINode, V1CSINodeDriver, V1Node } from '@kubernetes/client-node';
import { errorDetail, isNodeletError, nodeletError } from '../../errors/index.ts';
import { retry as retryWith, type RetryPolicy } from '../../backoff/index.ts';
import { apiMessage } from '../../kube/index.ts';
import type { NodeInfoApi } from './node-info-api.ts';
import { metaPatch, removeNodeID, setNodeID, setTopologyLabels, type Meta, type NodeUpdate } from './node-meta-updates.ts';

const MAX_INT32 = 2 ** 31 - 1;

/** Upstream nodeinfomanager `updateBackoff`: 4 tries, 10 ms ×5, 10 % jitter. */
export const UPDATE_BACKOFF: RetryPolicy = { steps: 4, initialMs: 10, factor: 5, jitter: 0.1 };

/** {@link retryWith} describing API errors by their Status message (catalogued errors by their detail). */
export function retry(p: RetryPolicy, what: string, fn: () => Promise<void>): Promise<void> {
  return retryWith(p, what, fn, (e) => (isNodeletError(e) ? e.detail : apiMessage(e)));
}

/** Installs/uninstalls CSI drivers' node info for one node. */
export class NodeInfoManager {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly api: NodeInfoApi,
    private readonly nodeName: string,
    private readonly backoff: RetryPolicy = UPDATE_BACKOFF,
  ) {}

  /** Upstream `InstallCSIDriver`. Throws NDL_CSI_NODE_INFO with upstream's wording. */
  installDriver(driver: string, nodeID: string, maxVolumes: number, topology: Readonly<Record<string, string>>): Promise<void> {
    return this.serial(async () => {
      if (nodeID === '') throw nodeletError('NDL_CSI_NODE_INFO', 'error adding CSI driver node info: driverNodeID must not be empty');
      try {
        await this.updateNode([setNodeID(driver, nodeID), setTopologyLabels(topology)]);
      } catch (e) {
        throw nodeletError('NDL_CSI_NODE_INFO', `error updating Node object with CSI driver node info: ${errorDetail(e)}`, e);
      }
      try {
        await retry(this.backoff, 'error updating CSINode', () => this.tryInstallInCSINode(driver, nodeID, maxVolumes, topology));
      } catch (e) {
        throw nodeletError('NDL_CSI_NODE_INFO', `error updating CSINode object with CSI driver node info: ${errorDetail(e)}`, e);
      }
    });
  }

  /** Upstream `UninstallCSIDriver`: the CSINode entry (and its attach limit) and the nodeid annotation entry go; topology labels stay. */
  uninstallDriver(driver: string): Promise<void> {
    return this.serial(async () => {
      try {
        await retry(this.backoff, 'error updating CSINode', () => this.tryUninstallFromCSINode(driver));
      } catch (e) {
        throw nodeletError('NDL_CSI_NODE_INFO', `error uninstalling CSI driver from CSINode object ${errorDetail(e)}`, e);
      }
      try {
        await this.updateNode([removeNodeID(driver)]);
      } catch (e) {
        throw nodeletError('NDL_CSI_NODE_INFO', `error removing CSI driver node info from Node object ${errorDetail(e)}`, e);
      }
    });
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async updateNode(updates: NodeUpdate[]): Promise<void> {
    await retry(this.backoff, 'error updating node', async () => {
      const node = await this.api.readNode(this.nodeName);
      const before: Meta = { labels: { ...node.metadata?.labels }, annotations: { ...node.metadata?.annotations } };
      const after: Meta = { labels: { ...before.labels }, annotations: { ...before.annotations } };
      let changed = false;
      for (const u of updates) changed = u(after) || changed;
      if (!changed) return;
      await this.api.patchNodeMeta(this.nodeName, metaPatch(node, before, after));
    });
  }

  private async tryInstallInCSINode(driver: string, nodeID: string, maxVolumes: number, topology: Readonly<Record<string, string>>): Promise<void> {
    const csiNode = (await this.api.readCSINode(this.nodeName)) ?? (await this.createCSINode());
    const keys = Object.keys(topology).sort();
    const drivers: V1CSINodeDriver[] = [];
    let modified = true;
    for (const d of csiNode.spec?.drivers ?? []) {
      if (d.name !== driver) drivers.push(d);
      else if (d.nodeID === nodeID && sameSet(d.topologyKeys ?? [], keys)) modified = false;
    }
    if (!modified) return;
    const entry: V1CSINodeDriver = { name: driver, nodeID, topologyKeys: keys };
    if (maxVolumes > 0) entry.allocatable = { count: Math.min(maxVolumes, MAX_INT32) };
    drivers.push(entry);
    await this.api.replaceCSINode(this.nodeName, { ...csiNode, spec: { ...csiNode.spec, drivers } });
  }

  /** Upstream `CreateCSINode`: owned by the Node (its UID read from the API). */
  private async createCSINode(): Promise<V1CSINode> {
    const node: V1Node = await this.api.readNode(this.nodeName);
    return this.api.createCSINode({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSINode',
      metadata: {
        name: this.nodeName,
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node.metadata!.name!, uid: node.metadata!.uid! }],
      },
      spec: { drivers: [] },
    });
  }

  /** Removes the driver's entry (upstream `tryUninstallDriverFromCSINode`). */
  private async tryUninstallFromCSINode(driver: string): Promise<void> {
    const csiNode = await this.api.readCSINode(this.nodeName);
    if (!csiNode) return;
    const all = csiNode.spec?.drivers ?? [];
    if (!all.some((d) => d.name === driver)) return;
    const remaining = all.filter((d) => d.name !== driver);
    await this.api.replaceCSINode(this.nodeName, { ...csiNode, spec: { ...csiNode.spec, drivers: remaining } });
  }
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const sa = new Set(a);
  return sa.size === new Set(b).size && b.every((x) => sa.has(x));
}

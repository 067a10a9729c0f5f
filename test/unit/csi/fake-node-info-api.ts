// An in-memory Node + CSINode store behind NodeInfoApi, with resourceVersions
// (a stale Node patch or CSINode update fails with 409 like the apiserver).
import type { V1CSINode, V1Node } from '@kubernetes/client-node';
import type { NodeInfoApi, NodeMetaPatch } from '../../../core/volumes/csi/node-info-api.ts';

function apiError(code: number, message: string): Error {
  return Object.assign(new Error(message), { code, body: JSON.stringify({ message }) });
}

export class FakeNodeInfoApi implements NodeInfoApi {
  node: V1Node;
  csiNode: V1CSINode | undefined;
  private rv = 1;
  /** Bumps the Node's resourceVersion right after the next read (a concurrent writer). */
  raceNextNodeRead = false;
  patches: NodeMetaPatch[] = [];

  constructor(name: string, labels: Record<string, string> = {}, annotations: Record<string, string> = {}) {
    this.node = { metadata: { name, uid: 'node-uid-1', labels, annotations, resourceVersion: String(this.rv) } };
  }

  async readNode(name: string): Promise<V1Node> {
    if (name !== this.node.metadata!.name) throw apiError(404, `nodes "${name}" not found`);
    const copy = structuredClone(this.node);
    if (this.raceNextNodeRead) {
      this.raceNextNodeRead = false;
      this.node.metadata!.resourceVersion = String(++this.rv);
    }
    return copy;
  }

  async patchNodeMeta(_name: string, p: NodeMetaPatch): Promise<void> {
    this.patches.push(p);
    if (p.resourceVersion && p.resourceVersion !== this.node.metadata!.resourceVersion) {
      throw apiError(
        409,
        'Operation cannot be fulfilled on nodes: the object has been modified; please apply your changes to the latest version and try again',
      );
    }
    const m = this.node.metadata!;
    for (const [field, patch] of [
      ['labels', p.labels],
      ['annotations', p.annotations],
    ] as const) {
      const target = { ...(m[field] ?? {}) };
      for (const [k, v] of Object.entries(patch ?? {})) {
        if (v === null) delete target[k];
        else target[k] = v;
      }
      m[field] = target;
    }
    m.resourceVersion = String(++this.rv);
  }

  async readCSINode(): Promise<V1CSINode | undefined> {
    return this.csiNode ? structuredClone(this.csiNode) : undefined;
  }

  async createCSINode(body: V1CSINode): Promise<V1CSINode> {
    if (this.csiNode) throw apiError(409, `csinodes.storage.k8s.io "${body.metadata?.name}" already exists`);
    this.csiNode = { ...structuredClone(body), metadata: { ...body.metadata, resourceVersion: String(++this.rv) } };
    return structuredClone(this.csiNode);
  }

  async replaceCSINode(name: string, body: V1CSINode): Promise<V1CSINode> {
    if (!this.csiNode) throw apiError(404, `csinodes.storage.k8s.io "${name}" not found`);
    if (body.metadata?.resourceVersion !== this.csiNode.metadata?.resourceVersion) throw apiError(409, 'the object has been modified');
    this.csiNode = { ...structuredClone(body), metadata: { ...body.metadata, resourceVersion: String(++this.rv) } };
    return structuredClone(this.csiNode);
  }

  nodeIDs(): Record<string, string> | undefined {
    const a = this.node.metadata?.annotations?.['csi.volume.kubernetes.io/nodeid'];
    return a === undefined ? undefined : (JSON.parse(a) as Record<string, string>);
  }
}

/**
 * The few API calls the CSI node info manager makes, behind a small
 * interface (unit tests use an in-memory fake; nodelet uses the real client).
 */
import type { V1CSINode, V1Node } from '@kubernetes/client-node';
import { isApiNotFound, mergePatch, type KubeClients } from '../../kube/index.ts';

/** Labels/annotations to set (string) or remove (null), guarded by the read resourceVersion. */
export interface NodeMetaPatch {
  readonly resourceVersion?: string;
  readonly labels?: Readonly<Record<string, string | null>>;
  readonly annotations?: Readonly<Record<string, string | null>>;
}

/** Node and CSINode access of the node info manager. */
export interface NodeInfoApi {
  readNode(name: string): Promise<V1Node>;
  /** A JSON merge patch of the Node's metadata; fails with 409 when the resourceVersion moved. */
  patchNodeMeta(name: string, patch: NodeMetaPatch): Promise<void>;
  /** The CSINode, or undefined when it does not exist. */
  readCSINode(name: string): Promise<V1CSINode | undefined>;
  createCSINode(body: V1CSINode): Promise<V1CSINode>;
  /** Update with optimistic concurrency (body.metadata.resourceVersion). */
  replaceCSINode(name: string, body: V1CSINode): Promise<V1CSINode>;
}

/** The real API behind {@link NodeInfoApi}. */
export function nodeInfoApi(clients: Pick<KubeClients, 'core' | 'storage'>): NodeInfoApi {
  return {
    readNode: (name) => clients.core.readNode({ name }),
    async patchNodeMeta(name, p) {
      const metadata: Record<string, unknown> = {};
      if (p.resourceVersion) metadata.resourceVersion = p.resourceVersion;
      if (p.labels && Object.keys(p.labels).length > 0) metadata.labels = p.labels;
      if (p.annotations && Object.keys(p.annotations).length > 0) metadata.annotations = p.annotations;
      await clients.core.patchNode({ name, body: { metadata } }, mergePatch);
    },
    async readCSINode(name) {
      try {
        return await clients.storage.readCSINode({ name });
      } catch (e) {
        if (isApiNotFound(e)) return undefined;
        throw e;
      }
    },
    createCSINode: (body) => clients.storage.createCSINode({ body }),
    replaceCSINode: (name, body) => clients.storage.replaceCSINode({ name, body }),
  };
}

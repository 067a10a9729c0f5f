/**
 * The edits the node info manager makes to a Node's labels and annotations
 * (upstream nodeinfomanager's nodeUpdateFuncs), as pure functions on a copy.
 */
import { errorDetail, nodeletError } from '../../errors/index.ts';
import { NODE_ID_ANNOTATION } from './csi-paths.ts';
import type { NodeMetaPatch } from './node-info-api.ts';
import type { V1Node } from '@kubernetes/client-node';

/** A Node's labels and annotations (copies). */
export type Meta = { labels: Record<string, string>; annotations: Record<string, string> };
/** Edits a copy of the Node's labels/annotations; returns true when it changed something. */
export type NodeUpdate = (meta: Meta) => boolean;

export function setNodeID(driver: string, nodeID: string): NodeUpdate {
  return (meta) => {
    const map = parseNodeIDs(meta.annotations[NODE_ID_ANNOTATION]);
    if (map[driver] === nodeID) return false;
    map[driver] = nodeID;
    meta.annotations[NODE_ID_ANNOTATION] = goJsonMap(map);
    return true;
  };
}

export function removeNodeID(driver: string): NodeUpdate {
  return (meta) => {
    const prev = meta.annotations[NODE_ID_ANNOTATION];
    if (!prev) return false;
    const map = parseNodeIDs(prev);
    if (!(driver in map)) return false;
    delete map[driver];
    if (Object.keys(map).length === 0) delete meta.annotations[NODE_ID_ANNOTATION];
    else meta.annotations[NODE_ID_ANNOTATION] = goJsonMap(map);
    return true;
  };
}

export function setTopologyLabels(topology: Readonly<Record<string, string>>): NodeUpdate {
  return (meta) => {
    const entries = Object.entries(topology);
    if (entries.length === 0) return false;
    for (const [k, v] of entries) {
      const cur = meta.labels[k];
      if (cur !== undefined && cur !== v) {
        throw nodeletError('NDL_CSI_NODE_INFO', `detected topology value collision: driver reported ${q(k)}:${q(v)} but existing label is ${q(k)}:${q(cur)}`);
      }
    }
    for (const [k, v] of entries) meta.labels[k] = v;
    return true;
  };
}

/** Upstream `buildNodeIDMapFromAnnotation`. */
function parseNodeIDs(value: string | undefined): Record<string, string> {
  if (!value) return {};
  try {
    const parsed = JSON.parse(value) as unknown;
    if (parsed === null) return {};
    if (typeof parsed !== 'object' || Array.isArray(parsed) || Object.values(parsed).some((v) => typeof v !== 'string')) {
      // Caught just below and wrapped with the annotation's value, as upstream does.
      throw new SyntaxError('json: cannot unmarshal into Go value of type map[string]string');
    }
    return { ...(parsed as Record<string, string>) };
  } catch (e) {
    throw nodeletError('NDL_CSI_NODE_INFO', `failed to parse node's ${q(NODE_ID_ANNOTATION)} annotation value (${q(value)}) err=${errorDetail(e)}`);
  }
}

/** JSON of a string map with sorted keys, like Go's json.Marshal. */
function goJsonMap(map: Record<string, string>): string {
  const sorted: Record<string, string> = {};
  for (const k of Object.keys(map).sort()) sorted[k] = map[k]!;
  return JSON.stringify(sorted);
}

export function metaPatch(node: V1Node, before: Meta, after: Meta): NodeMetaPatch {
  return {
    resourceVersion: node.metadata?.resourceVersion,
    labels: diff(before.labels, after.labels),
    annotations: diff(before.annotations, after.annotations),
  };
}

function diff(a: Record<string, string>, b: Record<string, string>): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const k of Object.keys(a)) if (!(k in b)) out[k] = null;
  for (const [k, v] of Object.entries(b)) if (a[k] !== v) out[k] = v;
  return out;
}

function q(s: string): string {
  return JSON.stringify(s);
}

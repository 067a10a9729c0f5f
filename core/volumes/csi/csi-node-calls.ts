/**
 * Promise wrappers around the CSI Node service calls the kubelet makes, each
 * with upstream's 2-minute deadline (`csiTimeout`). A failed call rejects
 * with an Error whose message reads like Go's status errors
 * (`rpc error: code = NotFound desc = ...`), which is what upstream puts in
 * its `FailedMount` events.
 */
import type * as grpc from '@grpc/grpc-js';
import { deadlineIn, grpcErrorText } from '../../../sockets/dial.ts';
import type {
  NodeClient,
  NodeGetInfoResponse__Output,
  NodeGetVolumeStatsResponse__Output,
  NodePublishVolumeRequest,
  NodeServiceCapability__Output,
  NodeStageVolumeRequest,
  NodeUnpublishVolumeRequest,
  NodeUnstageVolumeRequest,
} from '../../../sockets/csi.ts';
import { nodeletError } from '../../errors/index.ts';
import { CSI_TIMEOUT_MS } from './csi-paths.ts';

/** What NodeGetInfo reported, in the shape the node info manager needs. */
export interface CsiNodeInfo {
  readonly nodeID: string;
  /** 0 when not reported. */
  readonly maxVolumesPerNode: number;
  readonly topology: Readonly<Record<string, string>>;
}

/** gRPC codes after which the operation may still be in progress (upstream csi_client.go `isFinalError`). */
const NON_FINAL_CODES = new Set([
  1, // Canceled
  4, // DeadlineExceeded
  8, // ResourceExhausted
  10, // Aborted
  14, // Unavailable
]);

/**
 * Upstream `isFinalError`: true when a failed CSI call surely did not leave an
 * operation in progress (any gRPC code but Canceled, DeadlineExceeded,
 * ResourceExhausted, Aborted and Unavailable). An error that is no gRPC status
 * (the call was never answered) is not final.
 */
export function isFinalCsiError(e: unknown): boolean {
  for (let cur = e, depth = 0; cur && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'number') return !NON_FINAL_CODES.has(code);
  }
  return false;
}

/** The RPC error as NDL_CSI_DRIVER with Go's wording as its detail; the grpc error stays as `cause`. */
function rpcError(e: unknown): Error {
  return nodeletError('NDL_CSI_DRIVER', grpcErrorText(e), e);
}

function unary<Req, Res>(call: (req: Req, opts: grpc.CallOptions, cb: grpc.requestCallback<Res>) => unknown, req: Req, timeoutMs: number): Promise<Res> {
  return new Promise((resolve, reject) => {
    call(req, { deadline: deadlineIn(timeoutMs) }, (err, res) => {
      if (err) reject(rpcError(err));
      else resolve(res as Res);
    });
  });
}

/** NodeGetInfo → node ID, max volumes, topology segments. */
export async function nodeGetInfo(client: NodeClient, timeoutMs = CSI_TIMEOUT_MS): Promise<CsiNodeInfo> {
  const r = await unary<object, NodeGetInfoResponse__Output>(client.NodeGetInfo.bind(client), {}, timeoutMs);
  return {
    nodeID: r.node_id ?? '',
    maxVolumesPerNode: Number(r.max_volumes_per_node ?? 0),
    topology: { ...(r.accessible_topology?.segments ?? {}) },
  };
}

/** NodeGetCapabilities → the RPC capability type names (e.g. `STAGE_UNSTAGE_VOLUME`). */
export async function nodeGetCapabilities(client: NodeClient, timeoutMs = CSI_TIMEOUT_MS): Promise<Set<string>> {
  const r = await unary<object, { capabilities: NodeServiceCapability__Output[] }>(client.NodeGetCapabilities.bind(client), {}, timeoutMs);
  const out = new Set<string>();
  for (const c of r.capabilities ?? []) if (c.rpc?.type) out.add(String(c.rpc.type));
  return out;
}

/** NodeStageVolume. */
export async function nodeStageVolume(client: NodeClient, req: NodeStageVolumeRequest, timeoutMs = CSI_TIMEOUT_MS): Promise<void> {
  await unary(client.NodeStageVolume.bind(client), req, timeoutMs);
}

/** NodeUnstageVolume. */
export async function nodeUnstageVolume(client: NodeClient, req: NodeUnstageVolumeRequest, timeoutMs = CSI_TIMEOUT_MS): Promise<void> {
  await unary(client.NodeUnstageVolume.bind(client), req, timeoutMs);
}

/** NodePublishVolume. */
export async function nodePublishVolume(client: NodeClient, req: NodePublishVolumeRequest, timeoutMs = CSI_TIMEOUT_MS): Promise<void> {
  await unary(client.NodePublishVolume.bind(client), req, timeoutMs);
}

/** NodeUnpublishVolume. */
export async function nodeUnpublishVolume(client: NodeClient, req: NodeUnpublishVolumeRequest, timeoutMs = CSI_TIMEOUT_MS): Promise<void> {
  await unary(client.NodeUnpublishVolume.bind(client), req, timeoutMs);
}

/** NodeGetVolumeStats of a published volume (`volume_path` = the publish target). */
export async function nodeGetVolumeStats(
  client: NodeClient,
  req: { volume_id: string; volume_path: string; staging_target_path: string },
  timeoutMs = CSI_TIMEOUT_MS,
): Promise<NodeGetVolumeStatsResponse__Output> {
  return unary<typeof req, NodeGetVolumeStatsResponse__Output>(client.NodeGetVolumeStats.bind(client), req, timeoutMs);
}

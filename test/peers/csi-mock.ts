/**
 * Kubernetes' own e2e CSI mock driver (k8s.io/kubernetes/test/e2e/storage/drivers/csi-test,
 * v1.36.3) behind our main (go/cmd/csi-mock-driver), which logs every CSI call
 * with its request as a JSON line, so tests assert on the calls themselves.
 *
 *   const mock = await startCsiMockDriver({ rootDir, driverName: 'csi-mock.nodelet.dev', callLog });
 *   // register it with startNodeDriverRegistrar({ csiAddress: mock.endpointSocket, ... })
 *   mock.calls().filter((c) => c.method === CSI_NODE_PUBLISH)
 *
 * Mock behaviour (upstream's): volumes "1".."3" exist, node id = driver name,
 * NodePublish of a persistent volume mkdirs the target (an ephemeral one
 * creates nothing), NodeUnpublish removes it. Nothing is mounted: no root needed.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildPeers } from './build-peers.ts';
import { newSocketAt, runPeer, waitForPeer, type RunningPeer } from './running-peer.ts';

/** The mock's default driver name (upstream's `service.Name`). */
export const CSI_MOCK_DEFAULT_NAME = 'io.kubernetes.storage.mock';
/** Full gRPC method name of NodePublishVolume, as the call log records it. */
export const CSI_NODE_PUBLISH = '/csi.v1.Node/NodePublishVolume';
/** Full gRPC method name of NodeUnpublishVolume. */
export const CSI_NODE_UNPUBLISH = '/csi.v1.Node/NodeUnpublishVolume';
/** Full gRPC method name of NodeStageVolume. */
export const CSI_NODE_STAGE = '/csi.v1.Node/NodeStageVolume';
/** Full gRPC method name of NodeGetVolumeStats. */
export const CSI_NODE_GET_VOLUME_STATS = '/csi.v1.Node/NodeGetVolumeStats';
/** Full gRPC method name of NodeUnstageVolume. */
export const CSI_NODE_UNSTAGE = '/csi.v1.Node/NodeUnstageVolume';

/** One logged CSI call (request/response in protojson with the proto's field names). */
export interface CsiCall {
  readonly method: string;
  readonly request: Record<string, unknown> & { volume_id?: string; target_path?: string; volume_path?: string; volume_context?: Record<string, string> };
  readonly response: Record<string, unknown> | null;
  /** The gRPC error message, "" on success. */
  readonly error: string;
  /** The gRPC status code name ("OK", "Internal", ...). */
  readonly code: string;
  /** When the call was answered (RFC 3339). */
  readonly time: string;
}

/** Options of {@link startCsiMockDriver}. */
export interface CsiMockDriverOptions {
  /** nodelet's root dir: the socket is `<rootDir>/plugins/<driverName>/csi.sock`. */
  readonly rootDir: string;
  /** `--name` (default {@link CSI_MOCK_DEFAULT_NAME}); also the node id it reports. */
  readonly driverName?: string;
  /** File the calls are appended to, one JSON line each. */
  readonly callLog: string;
  /**
   * `--fail Method[@volume]=n[:Code]`: the first n calls of Method (for that volume id) fail
   * (e.g. `{ NodeStageVolume: { times: 2, code: 'Unavailable' } }`, `{ 'NodeStageVolume@2': ... }`).
   */
  readonly fail?: Readonly<Record<string, { times: number; code?: string }>>;
  /** `--attach-limit` reported by NodeGetInfo. */
  readonly attachLimit?: number;
  /** `--volume-mount-group`: offer VOLUME_MOUNT_GROUP (fsGroup delegated as volume_mount_group). */
  readonly volumeMountGroup?: boolean;
  /** Where stdout+stderr go (default: a temp file). */
  readonly logFile?: string;
}

/** A running CSI mock driver. */
export interface CsiMockDriver extends RunningPeer {
  /** `--name`: the CSI driver name (and node id). */
  readonly driverName: string;
  /** `<rootDir>/plugins/<driver>/csi.sock`. */
  readonly endpointSocket: string;
  /** The JSON-lines call log. */
  readonly callLog: string;
  /** The calls logged so far, in order. */
  calls(): CsiCall[];
}

/** Parses a call log (one JSON object per line; a torn last line is ignored). */
export function parseCallLog(text: string): CsiCall[] {
  const out: CsiCall[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as CsiCall);
    } catch {
      /* a line still being written */
    }
  }
  return out;
}

/** Starts the mock on `<rootDir>/plugins/<driver>/csi.sock`; resolves once the socket exists. */
export async function startCsiMockDriver(opts: CsiMockDriverOptions): Promise<CsiMockDriver> {
  const driverName = opts.driverName ?? CSI_MOCK_DEFAULT_NAME;
  const sockDir = join(opts.rootDir, 'plugins', driverName);
  mkdirSync(sockDir, { recursive: true });
  const endpointSocket = join(sockDir, 'csi.sock');
  const args = [`--endpoint=unix://${endpointSocket}`, `--name=${driverName}`, `--call-log=${opts.callLog}`];
  if (opts.attachLimit !== undefined) args.push(`--attach-limit=${opts.attachLimit}`);
  if (opts.volumeMountGroup) args.push('--volume-mount-group');
  for (const [method, f] of Object.entries(opts.fail ?? {})) args.push(`--fail=${method}=${f.times}${f.code ? `:${f.code}` : ''}`);
  const appeared = newSocketAt(endpointSocket);
  const p = runPeer('csi-mock-driver', buildPeers()['csi-mock-driver'], args, { logFile: opts.logFile });
  await waitForPeer(p, `socket ${endpointSocket}`, appeared);
  const calls = () => (existsSync(opts.callLog) ? parseCallLog(readFileSync(opts.callLog, 'utf8')) : []);
  return { ...p, driverName, endpointSocket, callLog: opts.callLog, calls };
}

/**
 * What the DRA manager asks of a registered DRA driver: the two calls of the
 * kubelet-facing `DRAPlugin` service (`k8s.io/kubelet/pkg/apis/dra/v1`),
 * in plain objects. The gRPC client (`grpc-driver-client.ts`) implements it;
 * unit tests fake it. Also the optional device-health stream.
 */
import type { DeviceHealthReport } from './health-info.ts';

/** The claim a call names (upstream `Claim`). */
export interface DraClaimRef {
  readonly namespace: string;
  readonly uid: string;
  readonly name: string;
}

/** A device the driver prepared for a claim (upstream `Device`). */
export interface PreparedDevice {
  readonly requestNames: readonly string[];
  readonly poolName: string;
  readonly deviceName: string;
  readonly cdiDeviceIds: readonly string[];
}

/** One claim's outcome of NodePrepareResources: devices, or the driver's error text. */
export interface PrepareResult {
  readonly devices?: readonly PreparedDevice[];
  readonly error?: string;
}

/** How a device-health watch ends: `error` unless the stream ended cleanly or was cancelled. */
export interface HealthWatchHandlers {
  /** One `NodeWatchResourcesResponse`: the driver's current health of its devices. */
  onReport(devices: readonly DeviceHealthReport[]): void;
  /** The stream ended (closed by the driver, failed, or cancelled). */
  onEnd(error?: Error): void;
}

/** A connection to one driver's DRAPlugin socket. */
export interface DraDriverClient {
  /** NodePrepareResources for `claims`; the result is keyed by claim UID. */
  nodePrepareResources(claims: readonly DraClaimRef[]): Promise<Record<string, PrepareResult>>;
  /** NodeUnprepareResources for `claims`; the result is keyed by claim UID (an `error` per claim, empty when done). */
  nodeUnprepareResources(claims: readonly DraClaimRef[]): Promise<Record<string, { readonly error?: string }>>;
  /**
   * `NodeWatchResources` of the optional `v1alpha1.DRAResourceHealth` service; present only when the
   * driver's registration offers it. Returns the cancel function (also cancelled by {@link close}).
   */
  watchHealth?(h: HealthWatchHandlers): () => void;
  /**
   * Follows the connection to the driver's socket (upstream's gRPC stats handler `HandleConn`):
   * connects at once, calls `fn(true)` once connected and `fn(false)` once the connection is
   * lost (the driver died, maybe without removing its sockets), reconnecting by itself. Returns
   * the function that stops following. A client without it counts as connected while registered.
   */
  watchConnection?(fn: (connected: boolean) => void): () => void;
  /** Closes the connection. */
  close(): void;
}

/** The service versions nodelet speaks, preferred first (upstream's `pkg/kubelet/cm/dra/plugin` order). */
export const DRA_SERVICE_VERSIONS = ['v1.DRAPlugin', 'v1beta1.DRAPlugin'] as const;

/** A service version nodelet speaks. */
export type DraServiceVersion = (typeof DRA_SERVICE_VERSIONS)[number];

/** Connects to a driver's socket with the chosen service version; `health`: it serves `v1alpha1.DRAResourceHealth`. */
export type DraClientFactory = (endpoint: string, version: DraServiceVersion, timeoutMs: number, health: boolean) => DraDriverClient;

/** The version to use of those a plugin offers (the first nodelet prefers), or undefined. */
export function chooseDraVersion(offered: readonly string[]): DraServiceVersion | undefined {
  return DRA_SERVICE_VERSIONS.find((v) => offered.includes(v));
}

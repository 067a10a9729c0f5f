/**
 * CSI peers for tests: a hostpath CSI driver and a node-driver-registrar,
 * built by build.sh (see test/peers/README.md for why both are harness
 * stand-ins with the upstream flags and wire types).
 *
 *   const drv = await startHostpathPlugin({ nodeId: 'n1', stateDir, endpointSocket: `${dir}/csi.sock` });
 *   const reg = await startNodeDriverRegistrar({
 *     csiAddress: drv.endpointSocket, kubeletRegistrationPath: drv.endpointSocket,
 *     pluginRegistrationDir: `${root}/plugins_registry` });
 *   // reg.registrationSocket === `${root}/plugins_registry/hostpath.csi.k8s.io-reg.sock`
 *   await reg.stop(); await drv.stop();
 *
 * hostpathplugin bind-mounts on NodePublishVolume: it needs root.
 */
import { join } from 'node:path';
import { buildPeers } from './build-peers.ts';
import { newSocketAt, runPeer, waitForPeer, type RunningPeer } from './running-peer.ts';

/** hostpathplugin's default driver name. */
export const HOSTPATH_DRIVER_NAME = 'hostpath.csi.k8s.io';
/** The topology key hostpathplugin reports in NodeGetInfo. */
export const HOSTPATH_TOPOLOGY_KEY = 'topology.hostpath.csi/node';

/** Options of {@link startHostpathPlugin}. */
export interface HostpathPluginOptions {
  /** `--nodeid`: the node ID returned by NodeGetInfo. */
  readonly nodeId: string;
  /** `--statedir`: volumes live in `<stateDir>/<volume id>` (ids from CreateVolume, see csi-controller.ts), the list in `<stateDir>/state.json`. */
  readonly stateDir: string;
  /** Path of the unix socket the driver serves CSI on (`--endpoint unix://<path>`). */
  readonly endpointSocket: string;
  /** `--drivername` (default {@link HOSTPATH_DRIVER_NAME}). */
  readonly driverName?: string;
  /** `--maxvolumespernode` (default 0: no limit). */
  readonly maxVolumesPerNode?: number;
  /** Where stdout+stderr go (default: a temp file). */
  readonly logFile?: string;
}

/** A running hostpathplugin. */
export interface HostpathPlugin extends RunningPeer {
  readonly endpointSocket: string;
  readonly driverName: string;
}

/** Starts hostpathplugin and resolves once its socket exists. */
export async function startHostpathPlugin(opts: HostpathPluginOptions): Promise<HostpathPlugin> {
  const driverName = opts.driverName ?? HOSTPATH_DRIVER_NAME;
  const args = [
    `--endpoint=unix://${opts.endpointSocket}`,
    `--nodeid=${opts.nodeId}`,
    `--drivername=${driverName}`,
    `--statedir=${opts.stateDir}`,
    `--maxvolumespernode=${opts.maxVolumesPerNode ?? 0}`,
  ];
  const appeared = newSocketAt(opts.endpointSocket);
  const p = runPeer('hostpathplugin', buildPeers().hostpathplugin, args, { logFile: opts.logFile });
  await waitForPeer(p, `socket ${opts.endpointSocket}`, appeared);
  return { ...p, endpointSocket: opts.endpointSocket, driverName };
}

/** Options of {@link startNodeDriverRegistrar}. */
export interface NodeDriverRegistrarOptions {
  /** `--csi-address`: the driver's socket, as the registrar reaches it. */
  readonly csiAddress: string;
  /** `--kubelet-registration-path`: the driver's socket as the kubelet dials it (returned in GetInfo). */
  readonly kubeletRegistrationPath: string;
  /** `--plugin-registration-path`: the kubelet's plugins_registry dir. */
  readonly pluginRegistrationDir: string;
  /** The driver's name, to know the socket `<dir>/<name>-reg.sock` (default {@link HOSTPATH_DRIVER_NAME}). */
  readonly driverName?: string;
  /** Where stdout+stderr go (default: a temp file). */
  readonly logFile?: string;
}

/** A running csi-node-driver-registrar. */
export interface NodeDriverRegistrar extends RunningPeer {
  /** `<pluginRegistrationDir>/<driver>-reg.sock`, serving pluginregistration.Registration. */
  readonly registrationSocket: string;
}

/**
 * Starts csi-node-driver-registrar and resolves once its registration socket
 * exists. It exits 1 when the kubelet answers NotifyRegistrationStatus with
 * registered=false (as upstream does).
 */
export async function startNodeDriverRegistrar(opts: NodeDriverRegistrarOptions): Promise<NodeDriverRegistrar> {
  const registrationSocket = join(opts.pluginRegistrationDir, `${opts.driverName ?? HOSTPATH_DRIVER_NAME}-reg.sock`);
  const args = [
    `--csi-address=${opts.csiAddress}`,
    `--kubelet-registration-path=${opts.kubeletRegistrationPath}`,
    `--plugin-registration-path=${opts.pluginRegistrationDir}`,
  ];
  const appeared = newSocketAt(registrationSocket);
  const p = runPeer('csi-node-driver-registrar', buildPeers()['csi-node-driver-registrar'], args, { logFile: opts.logFile });
  await waitForPeer(p, `socket ${registrationSocket}`, appeared);
  return { ...p, registrationSocket };
}

/**
 * Kubernetes' DRA test driver (k8s.io/kubernetes/test/e2e/dra/test-driver,
 * v1.36.3) as a DRA kubelet plugin against a nodelet root dir: it serves
 * `k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin` on `<rootDir>/plugins/<driver>/dra.sock`,
 * registers through `<rootDir>/plugins_registry/<driver>-reg.sock` (type
 * DRAPlugin), publishes a ResourceSlice owned by the Node (the Node must
 * exist), and writes `<cdiDir>/<driver>-<claim uid>-<request>.json` on
 * NodePrepareResources (removed on unprepare).
 *
 *   const dra = await startDraTestDriver(info, { nodeName, rootDir, cdiDir });
 *   // dra.registrationSocket, dra.pluginSocket
 *   await dra.stop();   // its ResourceSlices stay (upstream's kubelet removes them)
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ClusterInfo } from '../cluster/control-plane.ts';
import { buildPeers } from './build-peers.ts';
import { newSocketAt, runPeer, waitForPeer, type RunningPeer } from './running-peer.ts';

/** The test driver's default name. */
export const DRA_TEST_DRIVER_NAME = 'test-driver.cdi.k8s.io';

/** Options of {@link startDraTestDriver}. */
export interface DraTestDriverOptions {
  /** The Node the plugin serves (its ResourceSlice names it). */
  readonly nodeName: string;
  /** nodelet's root dir (`plugins_registry/` and `plugins/<driver>/` under it). */
  readonly rootDir: string;
  /** Where CDI spec files are written. */
  readonly cdiDir: string;
  /** `--drivername` (default {@link DRA_TEST_DRIVER_NAME}). */
  readonly driverName?: string;
  /** `--num-devices` (default 4). */
  readonly numDevices?: number;
  /** Kubeconfig it uses for ResourceSlices (default: the cluster admin's). */
  readonly kubeconfig?: string;
  /** Where stdout+stderr go (default: a temp file). */
  readonly logFile?: string;
}

/** A running DRA test driver. */
export interface DraTestDriver extends RunningPeer {
  /** `--drivername`. */
  readonly driverName: string;
  /** `<rootDir>/plugins_registry/<driver>-reg.sock` (pluginregistration.Registration). */
  readonly registrationSocket: string;
  /** `<rootDir>/plugins/<driver>/dra.sock` (the DRAPlugin service). */
  readonly pluginSocket: string;
}

/** Starts the driver; resolves once its registration socket exists. */
export async function startDraTestDriver(info: ClusterInfo, opts: DraTestDriverOptions): Promise<DraTestDriver> {
  const driverName = opts.driverName ?? DRA_TEST_DRIVER_NAME;
  const registryDir = join(opts.rootDir, 'plugins_registry');
  // --datadir is the kubelet's plugins dir: the driver listens on <datadir>/<driver>/dra.sock (which must exist).
  const pluginsDir = join(opts.rootDir, 'plugins');
  const dataDir = join(pluginsDir, driverName);
  for (const d of [registryDir, dataDir, opts.cdiDir]) mkdirSync(d, { recursive: true });
  const registrationSocket = join(registryDir, `${driverName}-reg.sock`);
  const args = [
    `--kubeconfig=${opts.kubeconfig ?? info.adminKubeconfig}`,
    `--drivername=${driverName}`,
    '-v=5',
    'kubelet-plugin',
    `--node-name=${opts.nodeName}`,
    `--plugin-registration-path=${registryDir}`,
    `--datadir=${pluginsDir}`,
    `--cdi-dir=${opts.cdiDir}`,
    `--num-devices=${opts.numDevices ?? 4}`,
  ];
  const appeared = newSocketAt(registrationSocket);
  const p = runPeer('dra-test-driver', buildPeers()['dra-test-driver'], args, { logFile: opts.logFile });
  await waitForPeer(p, `socket ${registrationSocket}`, appeared);
  return { ...p, driverName, registrationSocket, pluginSocket: join(dataDir, 'dra.sock') };
}

/**
 * Kubernetes' own sample device plugin (k8s.io/kubernetes/test/images/sample-device-plugin,
 * v1.36.3): resource `example.com/resource`, devices Dev-1 and Dev-2, Allocate
 * creates `/tmp/Dev-N` and mounts it. It serves DevicePlugin (and Registration,
 * for watcher-mode registration) on `<PLUGIN_SOCK_DIR>/dp.<unix seconds>` and
 * calls v1beta1 Register on the hard-coded
 * `/var/lib/kubelet/device-plugins/kubelet.sock` unless a `DEPRECATION` file is
 * there (it panics when that Register fails). So it runs in a private mount
 * namespace (in-kubelet-ns.sh) where that directory is `kubeletSocketDir`.
 *
 * Modes:
 *   kubelet-sock      sockets in kubeletSocketDir; registers through kubelet.sock
 *   plugins-registry  sockets in pluginSockDir (nodelet's plugins_registry), found
 *                     by the plugin watcher; the Register call is skipped only if
 *                     kubeletSocketDir/DEPRECATION exists (nodelet writes it)
 *
 * Needs root and util-linux (unshare, mount).
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildPeers } from './build-peers.ts';
import { isSocket, runPeer, waitForPeer, type RunningPeer } from './running-peer.ts';

const here = dirname(fileURLToPath(import.meta.url));

/** The extended resource the sample plugin advertises. */
export const SAMPLE_RESOURCE_NAME = 'example.com/resource';
/** Its device IDs (both healthy). */
export const SAMPLE_DEVICE_IDS: readonly string[] = ['Dev-1', 'Dev-2'];

/** Options of {@link startSampleDevicePlugin}. */
export interface SampleDevicePluginOptions {
  /** nodelet's `<root-dir>/device-plugins`: seen by the plugin as /var/lib/kubelet/device-plugins. */
  readonly kubeletSocketDir: string;
  /** Where the plugin's socket goes (PLUGIN_SOCK_DIR); required for plugins-registry, default kubeletSocketDir. */
  readonly pluginSockDir?: string;
  readonly mode: 'kubelet-sock' | 'plugins-registry';
  /** REGISTER_CONTROL_FILE: register only once this file is deleted. */
  readonly registerControlFile?: string;
  /** CDI_ENABLED: also return CDI device names (writes /var/run/cdi/example.com.json). */
  readonly cdi?: boolean;
  /** Where stdout+stderr go (default: a temp file). */
  readonly logFile?: string;
}

/** A running sample device plugin. */
export interface SampleDevicePlugin extends RunningPeer {
  /** `<pluginSockDir>/dp.<unix seconds>`. */
  readonly socketPath: string;
}

/** Starts the plugin in its mount namespace; resolves once its socket exists. */
export async function startSampleDevicePlugin(opts: SampleDevicePluginOptions): Promise<SampleDevicePlugin> {
  const sockDir = opts.pluginSockDir ?? (opts.mode === 'kubelet-sock' ? opts.kubeletSocketDir : undefined);
  if (sockDir === undefined) throw new Error('startSampleDevicePlugin: plugins-registry mode needs pluginSockDir');
  const before = new Set(dpSockets(sockDir));
  const env: NodeJS.ProcessEnv = { ...process.env, PLUGIN_SOCK_DIR: sockDir };
  delete env.REGISTER_CONTROL_FILE;
  delete env.CDI_ENABLED;
  if (opts.registerControlFile !== undefined) env.REGISTER_CONTROL_FILE = opts.registerControlFile;
  if (opts.cdi) env.CDI_ENABLED = 'true';
  const bin = buildPeers()['sample-device-plugin'];
  const p = runPeer('sample-device-plugin', join(here, 'in-kubelet-ns.sh'), [opts.kubeletSocketDir, bin], { logFile: opts.logFile, env });
  let socketPath = '';
  await waitForPeer(p, `dp.* socket in ${sockDir}`, () => {
    socketPath = dpSockets(sockDir).find((n) => !before.has(n)) ?? '';
    return socketPath !== '' && isSocket(join(sockDir, socketPath));
  });
  return { ...p, socketPath: join(sockDir, socketPath) };
}

function dpSockets(dir: string): string[] {
  return readdirSync(dir).filter((n) => /^dp\.\d+$/.test(n));
}

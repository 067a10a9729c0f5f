/**
 * Kubernetes' own e2e_node test device plugin (k8s.io/kubernetes/test/e2e_node/testdeviceplugin,
 * v1.36.3, the plugin of upstream's device_plugin_failures_pod_status_test.go) behind our
 * small main (go/cmd/test-device-plugin): it advertises `resource` with `devices` (all
 * Healthy), serves DevicePlugin on `<kubeletSocketDir>/test-device-plugin-<uniqueName>.sock`
 * and registers through `<kubeletSocketDir>/kubelet.sock` (paths hard-coded upstream, so it
 * runs in in-kubelet-ns.sh's mount namespace). {@link TestDevicePlugin.setHealth} changes the
 * devices' health: the plugin sends the new list over ListAndWatch (upstream's UpdateDevices).
 * Allocate mounts a fresh `/tmp/<uniqueName>-<id>*` file per device.
 *
 * Needs root and util-linux (unshare, mount).
 */
import { renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildPeers } from './build-peers.ts';
import { newSocketAt, runPeer, waitForPeer, type RunningPeer } from './running-peer.ts';

const here = dirname(fileURLToPath(import.meta.url));

/** Options of {@link startTestDevicePlugin}. */
export interface TestDevicePluginOptions {
  /** nodelet's `<root-dir>/device-plugins`: seen by the plugin as /var/lib/kubelet/device-plugins. */
  readonly kubeletSocketDir: string;
  /** The extended resource, e.g. `test.device/<unique>`. */
  readonly resource: string;
  /** Socket name suffix; unique per plugin. */
  readonly uniqueName: string;
  readonly devices: readonly string[];
  readonly logFile?: string;
}

/** A running test device plugin. */
export interface TestDevicePlugin extends RunningPeer {
  readonly socketPath: string;
  /** Reports `health` for each device (others keep theirs); the plugin sends the list within ~100 ms. */
  setHealth(health: Readonly<Record<string, 'Healthy' | 'Unhealthy'>>): void;
}

/** Starts the plugin; resolves once its socket exists (it registers right after creating it). */
export async function startTestDevicePlugin(o: TestDevicePluginOptions): Promise<TestDevicePlugin> {
  const control = join(tmpdir(), `nodelet-test-device-plugin-${process.pid}-${o.uniqueName}.control`);
  const state = new Map(o.devices.map((id) => [id, 'Healthy']));
  writeFileSync(control, '');
  const socketPath = join(o.kubeletSocketDir, `test-device-plugin-${o.uniqueName}.sock`);
  const found = newSocketAt(socketPath);
  const bin = buildPeers()['test-device-plugin'];
  const args = [
    o.kubeletSocketDir,
    bin,
    `--resource=${o.resource}`,
    `--unique-name=${o.uniqueName}`,
    `--devices=${o.devices.join(',')}`,
    `--control=${control}`,
  ];
  const p = runPeer('test-device-plugin', join(here, 'in-kubelet-ns.sh'), args, { logFile: o.logFile });
  await waitForPeer(p, `socket ${socketPath}`, found);
  return {
    ...p,
    socketPath,
    setHealth(health) {
      for (const [id, h] of Object.entries(health)) state.set(id, h);
      // Whole or not at all: the plugin polls the file.
      writeFileSync(`${control}.tmp`, [...state].map(([id, h]) => `${id} ${h}\n`).join(''));
      renameSync(`${control}.tmp`, control);
    },
  };
}

/**
 * Figure 6, plugins.
 *   CSI: hostpathplugin serves its CSI socket; csi-node-driver-registrar then
 *     creates `<root>/plugins_registry/hostpath.csi.k8s.io-reg.sock`. From that
 *     socket's creation time (its inode birth/change time) to the receipt of a
 *     watch event showing the driver in the node's CSINode.
 *   Device plugin: only when nodelet serves `<root>/device-plugins/kubelet.sock`.
 *     The sample device plugin (in plugins_registry when nodelet wrote
 *     DEPRECATION, else through kubelet.sock): its socket's creation time → a
 *     Node watch event with `example.com/resource` in status.capacity.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { HOSTPATH_DRIVER_NAME, startHostpathPlugin, startNodeDriverRegistrar } from '../../test/peers/csi-hostpath.ts';
import { SAMPLE_RESOURCE_NAME, startSampleDevicePlugin } from '../../test/peers/sample-device-plugin.ts';
import { NODELET_NODE, type Clients } from '../lib/env.ts';
import { watchUntil } from '../lib/watch-until.ts';

/** One plugin figure: milliseconds, or why it is not available. */
export type PluginFigure = { ms: number } | { notAvailable: string };

/** Result of the plugins figure. */
export interface PluginsResult {
  csi: PluginFigure;
  devicePlugin: PluginFigure;
}

function createdAt(path: string): number {
  const st = statSync(path);
  return st.birthtimeMs > 0 ? st.birthtimeMs : st.ctimeMs;
}

async function csi(c: Clients, rootDir: string): Promise<PluginFigure> {
  const regDir = join(rootDir, 'plugins_registry');
  if (!existsSync(regDir)) return { notAvailable: `${regDir} does not exist (no plugin watcher)` };
  const dir = join(rootDir, 'bench-csi');
  mkdirSync(dir, { recursive: true });
  const until = await watchUntil<k8s.V1CSINode>(
    c.kc,
    '/apis/storage.k8s.io/v1/csinodes',
    `metadata.name=${NODELET_NODE}`,
    (n) => (n.spec?.drivers ?? []).some((d) => d.name === HOSTPATH_DRIVER_NAME),
    30_000,
  );
  const drv = await startHostpathPlugin({ nodeId: NODELET_NODE, stateDir: join(dir, 'state'), endpointSocket: join(dir, 'csi.sock') });
  try {
    const reg = await startNodeDriverRegistrar({ csiAddress: drv.endpointSocket, kubeletRegistrationPath: drv.endpointSocket, pluginRegistrationDir: regDir });
    try {
      const t0 = createdAt(reg.registrationSocket);
      const t1 = await until.at.catch((e: Error) => e);
      if (t1 instanceof Error) return { notAvailable: `CSINode never showed ${HOSTPATH_DRIVER_NAME}: ${t1.message}` };
      return { ms: Math.round(t1 - t0) };
    } finally {
      await reg.stop();
    }
  } finally {
    until.stop();
    await drv.stop();
  }
}

async function devicePlugin(c: Clients, rootDir: string): Promise<PluginFigure> {
  const dpDir = join(rootDir, 'device-plugins');
  if (!existsSync(join(dpDir, 'kubelet.sock'))) return { notAvailable: `nodelet serves no ${join(dpDir, 'kubelet.sock')} (device manager not wired)` };
  const until = await watchUntil<k8s.V1Node>(
    c.kc,
    '/api/v1/nodes',
    `metadata.name=${NODELET_NODE}`,
    (n) => Number(n.status?.capacity?.[SAMPLE_RESOURCE_NAME] ?? 0) > 0,
    20_000,
  );
  try {
    // nodelet writes DEPRECATION there when it finds device plugins through plugins_registry (watcher mode).
    const watcher = existsSync(join(dpDir, 'DEPRECATION'));
    const dp = await startSampleDevicePlugin(
      watcher
        ? { kubeletSocketDir: dpDir, mode: 'plugins-registry', pluginSockDir: join(rootDir, 'plugins_registry') }
        : { kubeletSocketDir: dpDir, mode: 'kubelet-sock' },
    );
    try {
      const t0 = createdAt(dp.socketPath);
      const t1 = await until.at.catch((e: Error) => e);
      if (t1 instanceof Error) {
        const tail = dp.log().split('\n').filter(Boolean).slice(-3).join(' | ');
        return { notAvailable: `capacity never showed ${SAMPLE_RESOURCE_NAME}: ${t1.message}; plugin log: ${tail}` };
      }
      return { ms: Math.round(t1 - t0) };
    } finally {
      await dp.stop();
    }
  } finally {
    until.stop();
  }
}

/** Measures both plugin figures; an error in one becomes its `notAvailable` reason. */
export async function measurePlugins(c: Clients, rootDir: string): Promise<PluginsResult> {
  const safe = (p: Promise<PluginFigure>) => p.catch((e: Error): PluginFigure => ({ notAvailable: `failed: ${e.message.split('\n')[0]}` }));
  return { csi: await safe(csi(c, rootDir)), devicePlugin: await safe(devicePlugin(c, rootDir)) };
}

/**
 * The device-health streams of the registered DRA drivers (upstream
 * `DRAPluginManager` health monitoring + `HandleWatchResourcesStream`): when a
 * driver that offers `v1alpha1.DRAResourceHealth` registers, nodelet opens its
 * `NodeWatchResources` stream; each report updates the health cache, and the
 * pods using a device whose health changed are synced again (their
 * `allocatedResourcesStatus` changes). When the stream ends the driver's
 * health is forgotten (Unknown); while the driver stays registered the
 * stream is opened again after {@link HEALTH_RETRY_MS}.
 *
 *   register (offers health) ──► watching ──report──► cache.update ──changed──► resync pods using the devices
 *                                  │ stream ends / fails
 *                                  ▼
 *                 cache.clearDriver (pods resynced) ──still registered?──► watching again after 5 s
 *                                                    └─ deregistered / replaced / stopped ──► (none)
 */
import type { Logger } from '@nodelet/plugin-api/v1';
import type { DraManager } from './dra-manager.ts';
import type { DraDriverClient } from './driver-client.ts';
import type { DraDriverRegistry } from './driver-registry.ts';
import type { DeviceHealthCache } from './health-info.ts';

/** How long after a health stream ended it is opened again (the driver still registered). */
export const HEALTH_RETRY_MS = 5000;

/** What the health watch needs. */
export interface HealthWatchOptions {
  readonly drivers: DraDriverRegistry;
  readonly cache: DeviceHealthCache;
  readonly manager: DraManager;
  /** Pods whose device health changed (sync them again). */
  onChange(podUIDs: string[]): void;
  readonly log: Logger;
  /** Tests: the re-open delay (default {@link HEALTH_RETRY_MS}). */
  readonly retryMs?: number;
}

/** Watches the health of every driver that registers with the health service; returns the stop function. */
export function startHealthWatch(o: HealthWatchOptions): () => void {
  const watches = new Map<string, { client: DraDriverClient; cancel: () => void; retry?: ReturnType<typeof setTimeout> }>();
  let stopped = false;
  const notify = (driver: string, devices: { poolName: string; deviceName: string }[]) => {
    if (devices.length === 0) return;
    const uids = o.manager.podsUsingDevices(driver, devices);
    if (uids.length === 0) return;
    o.log.info({ driver, devices: devices.length, pods: uids.length }, 'DRA device health changed; updating the pods using the devices');
    o.onChange(uids);
  };
  const open = (driver: string, client: DraDriverClient) => {
    const w = watches.get(driver);
    if (w?.retry) clearTimeout(w.retry);
    if (w && w.client !== client) w.cancel();
    const entry: { client: DraDriverClient; cancel: () => void; retry?: ReturnType<typeof setTimeout> } = { client, cancel: () => undefined };
    watches.set(driver, entry);
    entry.cancel = client.watchHealth!({
      onReport: (devices) => notify(driver, o.cache.update(driver, devices)),
      onEnd: (err) => {
        if (watches.get(driver) !== entry) return;
        notify(driver, o.cache.clearDriver(driver));
        const still = !stopped && o.drivers.client(driver) === client;
        if (err) o.log.warn({ driver, err: err.message, reopen: still }, 'DRA device health stream ended');
        if (!still) {
          watches.delete(driver);
          return;
        }
        entry.retry = setTimeout(() => {
          if (!stopped && o.drivers.client(driver) === client) open(driver, client);
        }, o.retryMs ?? HEALTH_RETRY_MS);
        entry.retry.unref?.();
      },
    });
    o.log.info({ driver }, 'Watching DRA device health');
  };
  const off = o.drivers.onRegister((driver) => {
    const client = o.drivers.client(driver);
    if (client?.watchHealth) open(driver, client);
  });
  return () => {
    stopped = true;
    off();
    for (const w of watches.values()) {
      if (w.retry) clearTimeout(w.retry);
      w.cancel();
    }
    watches.clear();
  };
}

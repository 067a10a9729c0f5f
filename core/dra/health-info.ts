/**
 * The device health a DRA driver reports over its `NodeWatchResources` stream
 * (upstream `pkg/kubelet/cm/dra/healthinfo.go`): per driver, the last report
 * of each device (`<pool>/<device>`). A report older than its timeout (the
 * driver's `health_check_timeout_seconds`, default 30 s) reads as `Unknown`;
 * so does a device never reported. When a driver's stream ends its devices
 * are forgotten (Unknown). Kept in memory only (upstream also checkpoints it:
 * after a restart nodelet reads Unknown until the driver's first report).
 *
 *   (unreported: Unknown) ──report──► Healthy / Unhealthy / Unknown (+ message)
 *        ▲                              │ no report for longer than the timeout
 *        └──── stream ends ◄────────────┴──► Unknown
 */

/** Upstream's `ResourceHealthStatus` values. */
export type DeviceHealthStatus = 'Healthy' | 'Unhealthy' | 'Unknown';

/** Upstream's default health timeout when the driver sets none. */
export const DEFAULT_HEALTH_TIMEOUT_MS = 30_000;

/** Messages are cut to this length (upstream truncates to 1021 characters + "..."). */
const MAX_MESSAGE = 1024;

/** One device's health as a driver reported it. */
export interface DeviceHealthReport {
  readonly poolName: string;
  readonly deviceName: string;
  readonly health: DeviceHealthStatus;
  /** `health_check_timeout_seconds` (≤ 0: the default). */
  readonly timeoutSeconds?: number;
  readonly message?: string;
}

interface Entry {
  health: DeviceHealthStatus;
  message: string;
  timeoutMs: number;
  /** When the report arrived (ms, the cache's clock). */
  updatedAt: number;
}

const truncate = (m: string) => (m.length > MAX_MESSAGE ? `${m.slice(0, MAX_MESSAGE - 3)}...` : m);

/** Device health by driver; `now` is injectable for tests. */
export class DeviceHealthCache {
  private readonly drivers = new Map<string, Map<string, Entry>>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Records a report of `driver` (upstream `updateHealthInfo`) and returns the devices whose health or
   * message changed, including those not in the report whose last health timed out (now Unknown).
   */
  update(driver: string, devices: readonly DeviceHealthReport[]): { poolName: string; deviceName: string }[] {
    const now = this.now();
    let known = this.drivers.get(driver);
    if (!known) this.drivers.set(driver, (known = new Map()));
    const changed: { poolName: string; deviceName: string }[] = [];
    const reported = new Set<string>();
    for (const d of devices) {
      const key = `${d.poolName}/${d.deviceName}`;
      reported.add(key);
      const timeoutMs = d.timeoutSeconds && d.timeoutSeconds > 0 ? d.timeoutSeconds * 1000 : DEFAULT_HEALTH_TIMEOUT_MS;
      const next: Entry = { health: d.health, message: truncate(d.message ?? ''), timeoutMs, updatedAt: now };
      const prev = known.get(key);
      if (!prev || prev.health !== next.health || prev.message !== next.message || prev.timeoutMs !== next.timeoutMs) {
        changed.push({ poolName: d.poolName, deviceName: d.deviceName });
      }
      known.set(key, next);
    }
    for (const [key, e] of known) {
      if (reported.has(key) || e.health === 'Unknown' || now - e.updatedAt <= e.timeoutMs) continue;
      known.set(key, { ...e, health: 'Unknown', message: '', updatedAt: now });
      const [poolName = '', deviceName = ''] = [key.slice(0, key.indexOf('/')), key.slice(key.indexOf('/') + 1)];
      changed.push({ poolName, deviceName });
    }
    return changed;
  }

  /** The health of one device now (upstream `getHealthInfo`): Unknown when never reported or timed out. */
  get(driver: string, poolName: string, deviceName: string): { health: DeviceHealthStatus; message: string } {
    const e = this.drivers.get(driver)?.get(`${poolName}/${deviceName}`);
    if (!e || this.now() - e.updatedAt > e.timeoutMs) return { health: 'Unknown', message: '' };
    return { health: e.health, message: e.message };
  }

  /** Forgets a driver's devices (its stream ended); returns the devices it had reported. */
  clearDriver(driver: string): { poolName: string; deviceName: string }[] {
    const known = this.drivers.get(driver);
    this.drivers.delete(driver);
    return [...(known?.keys() ?? [])].map((k) => ({ poolName: k.slice(0, k.indexOf('/')), deviceName: k.slice(k.indexOf('/') + 1) }));
  }
}

/**
 * The DRA drivers registered on this node (upstream `pkg/kubelet/cm/dra/plugin`
 * `DRAPluginManager` and its clean-up handler): one client per driver name,
 * and the clean-up of ResourceSlices nobody serves.
 *
 * At start ({@link DraDriverRegistry.wipeAtStart}) every ResourceSlice of this
 * node is deleted at once, whatever its driver, as upstream's kubelet does: no
 * driver has registered yet and one may never come back, so its devices must
 * not be offered (pods would get stuck waiting for it); a driver that does
 * register publishes its slices again. A driver is usable while it is
 * registered and its connection is up (upstream's `usable`: a plugin whose gRPC
 * connection is connected). A driver that stops being usable — it deregistered
 * (removed its registration socket), or its connection was lost (it died
 * without removing its sockets: killed, crashed, or a SIGTERM before its
 * signal handler was set) — keeps its slices for a grace period (upstream 30
 * s) so a restarting driver does not make the scheduler see the devices
 * vanish; if it is not usable again by then, the slices of this node and
 * driver are deleted. The grace period runs from the first moment the driver
 * was not usable: a later deregistration or disconnection does not restart it
 * (upstream's pending wipe keeps its time). Each wipe is retried with
 * upstream's back-off (1 s doubling to 5 min, 20 % jitter, 100 tries) and
 * given up when the driver is usable again (or nodelet stops).
 *
 *   start ──wipe all of the node's slices (retried)──► (none)
 *   (none) ──register──► registered ──connected──► usable
 *                            ▲                       │ deregister(same endpoint), or connection lost
 *                            │                       ▼
 *                            │                    leaving ──grace period over──► delete its ResourceSlices (retried)
 *                            │                       │                                   │
 *                            └── usable again (register + connected): cancels the wipe ◄─┘ (until done)
 */
import type { Logger } from '@nodelet/plugin-api/v1';
import { nextDelay, withJitter, type RetryPolicy } from '../backoff/index.ts';
import type { DraDriverClient } from './driver-client.ts';

/** Deletes this node's ResourceSlices of one driver, or of all drivers when `driver` is undefined (a `deleteCollection` with field selectors). */
export type SliceWiper = (driver: string | undefined) => Promise<void>;

/** Upstream's wiping back-off (`wipeResourceSlices`): 1 s doubling to 5 min, 20 % jitter, 100 tries. */
export const SLICE_WIPE_RETRY: RetryPolicy = { initialMs: 1000, factor: 2, maxMs: 300_000, jitter: 0.2, steps: 100 };

interface Entry {
  endpoint: string;
  client: DraDriverClient;
  /** Its connection is up (always, for a client that cannot tell). */
  connected: boolean;
  /** Stops following its connection. */
  unwatch?: () => void;
}

/** The registered drivers and their pending slice clean-ups. */
export class DraDriverRegistry {
  private readonly drivers = new Map<string, Entry>();
  /** Pending wipes of deregistered drivers' slices ('' is the start-up wipe of all drivers). */
  private readonly leaving = new Map<string, AbortController>();
  private readonly listeners = new Set<(driver: string) => void>();

  constructor(
    private readonly o: {
      /** How long a deregistered driver's slices stay (upstream 30 s). */
      readonly graceMs: number;
      readonly wipeSlices?: SliceWiper;
      readonly log: Logger;
    },
  ) {}

  /** Deletes every ResourceSlice of this node now (retried in the background until it succeeds or nodelet stops). */
  wipeAtStart(): void {
    this.wipeLater(undefined, 0);
  }

  /** Adds (or replaces) a driver's connection; once it is connected, a pending clean-up of its slices is cancelled. */
  register(name: string, endpoint: string, client: DraDriverClient): void {
    const old = this.drivers.get(name);
    old?.unwatch?.();
    old?.client.close();
    const e: Entry = { endpoint, client, connected: client.watchConnection === undefined };
    this.drivers.set(name, e);
    e.unwatch = client.watchConnection?.((connected) => {
      if (this.drivers.get(name) !== e || e.connected === connected) return;
      e.connected = connected;
      this.o.log.info({ driver: name, endpoint, connected }, connected ? 'DRA plugin connected' : 'DRA plugin connection lost');
      this.sync(name);
    });
    this.sync(name);
    for (const fn of this.listeners) fn(name);
  }

  /** Removes the driver if `endpoint` is still its endpoint, and schedules its slices' removal. */
  deregister(name: string, endpoint: string): void {
    const e = this.drivers.get(name);
    if (!e || e.endpoint !== endpoint) return;
    this.drivers.delete(name);
    e.unwatch?.();
    e.client.close();
    this.sync(name);
  }

  /** Whether `name` is registered with its connection up (upstream `usable`). */
  private usable(name: string): boolean {
    return this.drivers.get(name)?.connected === true;
  }

  /**
   * Upstream's `sync`, after any change of a driver: usable, its pending wipe is cancelled; not
   * usable, its wipe is scheduled after the grace period unless one is pending already (whose time stands).
   */
  private sync(name: string): void {
    if (this.usable(name)) {
      this.leaving.get(name)?.abort();
      this.leaving.delete(name);
      return;
    }
    if (this.leaving.has(name)) return;
    this.wipeLater(name, this.o.graceMs);
  }

  /** Waits `delayMs`, then wipes the slices of `driver` (all drivers: undefined) with retries, unless cancelled. */
  private wipeLater(driver: string | undefined, delayMs: number): void {
    const wipe = this.o.wipeSlices;
    if (!wipe) return;
    const key = driver ?? '';
    this.leaving.get(key)?.abort();
    const ac = new AbortController();
    this.leaving.set(key, ac);
    const sleep = (ms: number) =>
      new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(t);
          ac.signal.removeEventListener('abort', done);
          resolve();
        };
        const t = setTimeout(done, ms);
        t.unref?.();
        ac.signal.addEventListener('abort', done);
      });
    const log = { driver: driver ?? '(all)' };
    void (async () => {
      if (delayMs > 0) await sleep(delayMs);
      let delay: number | undefined;
      for (let i = 0; i < SLICE_WIPE_RETRY.steps && !ac.signal.aborted; i++) {
        if (driver !== undefined && this.usable(driver)) break;
        try {
          await wipe(driver);
          this.o.log.info(
            log,
            driver === undefined ? "Deleted this node's ResourceSlices at start" : 'Deleted ResourceSlices of a DRA driver that did not register again',
          );
          break;
        } catch (err) {
          this.o.log.warn({ ...log, err: String((err as Error).message ?? err) }, 'Failed to delete ResourceSlices, will retry');
        }
        delay = nextDelay(SLICE_WIPE_RETRY, delay);
        await sleep(withJitter(SLICE_WIPE_RETRY, delay));
      }
      if (this.leaving.get(key) === ac) this.leaving.delete(key);
    })();
  }

  /** The client of a registered driver. */
  client(name: string): DraDriverClient | undefined {
    return this.drivers.get(name)?.client;
  }

  /** Calls `fn` with a driver's name whenever it registers. */
  onRegister(fn: (driver: string) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Closes every connection and drops pending clean-ups (slices stay, as when the kubelet stops). */
  stop(): void {
    for (const ac of this.leaving.values()) ac.abort();
    this.leaving.clear();
    for (const e of this.drivers.values()) {
      e.unwatch?.();
      e.client.close();
    }
    this.drivers.clear();
  }
}

/**
 * The DRA drivers registered on this node (upstream `pkg/kubelet/cm/dra/plugin`
 * `DRAPluginManager`): one client per driver name, and the clean-up of a
 * driver's ResourceSlices when it goes away. A driver that deregisters keeps
 * its slices for a grace period (upstream 30 s) so a restarting driver does
 * not make the scheduler see the devices vanish; if it has not registered
 * again by then, the slices of this node and driver are deleted.
 *
 *   (none) ──register──► registered ──deregister(same endpoint)──► leaving
 *                           ▲                                         │ grace period over:
 *                           └────────────── register ◄────────────────┤ delete ResourceSlices
 *                                                                      ▼
 *                                                                   (none)
 */
import type { Logger } from '@nodelet/plugin-api/v1';
import type { DraDriverClient } from './driver-client.ts';

/** Deletes this node's ResourceSlices of one driver (a `deleteCollection` with field selectors). */
export type SliceWiper = (driver: string) => Promise<void>;

interface Entry {
  endpoint: string;
  client: DraDriverClient;
}

/** The registered drivers and their pending slice clean-ups. */
export class DraDriverRegistry {
  private readonly drivers = new Map<string, Entry>();
  private readonly leaving = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly listeners = new Set<(driver: string) => void>();

  constructor(
    private readonly o: {
      /** How long a deregistered driver's slices stay (upstream 30 s). */
      readonly graceMs: number;
      readonly wipeSlices?: SliceWiper;
      readonly log: Logger;
    },
  ) {}

  /** Adds (or replaces) a driver's connection; cancels a pending clean-up. */
  register(name: string, endpoint: string, client: DraDriverClient): void {
    const t = this.leaving.get(name);
    if (t) clearTimeout(t);
    this.leaving.delete(name);
    this.drivers.get(name)?.client.close();
    this.drivers.set(name, { endpoint, client });
    for (const fn of this.listeners) fn(name);
  }

  /** Removes the driver if `endpoint` is still its endpoint, and schedules its slices' removal. */
  deregister(name: string, endpoint: string): void {
    const e = this.drivers.get(name);
    if (!e || e.endpoint !== endpoint) return;
    this.drivers.delete(name);
    e.client.close();
    const wipe = this.o.wipeSlices;
    if (!wipe) return;
    const t = setTimeout(() => {
      this.leaving.delete(name);
      if (this.drivers.has(name)) return;
      wipe(name).then(
        () => this.o.log.info({ driver: name }, 'Deleted ResourceSlices of a DRA driver that did not register again'),
        (err: unknown) => this.o.log.warn({ driver: name, err: String(err) }, 'Failed to delete ResourceSlices of a deregistered DRA driver'),
      );
    }, this.o.graceMs);
    t.unref?.();
    this.leaving.set(name, t);
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
    for (const t of this.leaving.values()) clearTimeout(t);
    this.leaving.clear();
    for (const e of this.drivers.values()) e.client.close();
    this.drivers.clear();
  }
}

/**
 * The registered CSI drivers of this node (upstream `csiDrivers`, a
 * `DriversStore`): name → endpoint and highest supported version, plus one
 * gRPC client per driver, created on first use and closed when the driver
 * goes away.
 *
 * The CSI protocol code (sockets/csi.ts: 0.35 MB of generated message code) is
 * loaded when the first driver registers, not at start: a node without CSI drivers
 * never loads it.
 */
import type { NodeClient } from '../../../sockets/csi.ts';
import type { GenericVersion } from '../../pluginmanager/index.ts';
import { nodeletError } from '../../errors/index.ts';

/** One registered driver. */
export interface CsiDriver {
  readonly name: string;
  /** The unix socket of its Node service. */
  readonly endpoint: string;
  readonly highestSupportedVersion: GenericVersion;
}

interface Entry extends CsiDriver {
  client?: NodeClient;
}

/** Makes the Node service client of a driver's socket. */
export type CsiNodeClientFactory = (endpoint: string) => NodeClient;

/** Loads the CSI protocol code and returns its client factory (sockets/csi.ts's `csiNodeClient`). */
export const loadCsiNodeClientFactory = async (): Promise<CsiNodeClientFactory> => (await import('../../../sockets/csi.ts')).csiNodeClient;

/** Driver name → driver. Waiters are woken when a driver registers. */
export class CsiDriverRegistry {
  private readonly drivers = new Map<string, Entry>();
  private readonly waiters = new Set<() => void>();
  private newClient?: CsiNodeClientFactory;

  /** `loadClientFactory` is called once, when the first driver registers. */
  constructor(private readonly loadClientFactory: () => Promise<CsiNodeClientFactory> = loadCsiNodeClientFactory) {}

  /** The driver registered under `name`, if any. */
  get(name: string): CsiDriver | undefined {
    return this.drivers.get(name);
  }

  /** Records (or replaces) a driver, once the CSI client code is loaded; a replaced driver's client is closed. */
  async set(driver: CsiDriver): Promise<void> {
    this.newClient ??= await this.loadClientFactory();
    this.drivers.get(driver.name)?.client?.close();
    this.drivers.set(driver.name, { ...driver });
    for (const wake of [...this.waiters]) wake();
  }

  /** Forgets `name` (only when its endpoint is `endpoint`, if given). Returns true when removed. */
  delete(name: string, endpoint?: string): boolean {
    const d = this.drivers.get(name);
    if (!d || (endpoint !== undefined && d.endpoint !== endpoint)) return false;
    d.client?.close();
    this.drivers.delete(name);
    return true;
  }

  /** Names of the registered drivers. */
  names(): string[] {
    return [...this.drivers.keys()];
  }

  /**
   * The Node service client of `name`; throws upstream's
   * `driver name X not found in the list of registered CSI drivers`.
   */
  nodeClient(name: string): NodeClient {
    const d = this.drivers.get(name);
    if (!d) throw nodeletError('NDL_CSI_DRIVER', `driver name ${name} not found in the list of registered CSI drivers`);
    // A driver is recorded only after the client code loaded (set()).
    d.client ??= this.newClient!(d.endpoint);
    return d.client;
  }

  /** Resolves true once `name` is registered, or false after `timeoutMs`. */
  async waitFor(name: string, timeoutMs: number): Promise<boolean> {
    if (this.drivers.has(name)) return true;
    return new Promise((resolve) => {
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(ok);
      };
      const check = (): void => {
        if (this.drivers.has(name)) done(true);
      };
      const timer = setTimeout(() => done(false), timeoutMs);
      this.waiters.add(check);
    });
  }

  /** Closes every client (nodelet stopping). */
  close(): void {
    for (const d of this.drivers.values()) {
      d.client?.close();
      d.client = undefined;
    }
  }
}

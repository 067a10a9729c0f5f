/**
 * The Linux bridge that holds pod IPs (default `nodelet0`), driven with `ip`
 * from iproute2 (nodelet runs it through helpers, `ip-shell.ts`: a pod IP's
 * `addr replace`/`addr del` as netlink messages, the rest through a shell;
 * {@link ipCommand} is the plain `execFile`). Hand-written: the npm netlink
 * packages are native addons or unmaintained, and `ip` is on every node.
 * (This kernel may lack the `dummy` driver, so a bridge with no ports is used:
 * it is up, and addresses on it are local addresses of the host.)
 *
 * The bridge carries each CIDR's gateway with the CIDR's prefix (so the host
 * routes the whole pod CIDR to it) and each pod IP as a /32 (IPv6: /128,
 * `nodad` so it is usable at once); a server bound on a pod IP is reachable
 * from the host like any local address.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { errorDetail, nodeletError } from '../errors/index.ts';

const run = promisify(execFile);

/** Runs `ip` with arguments; resolves with stdout. Replaceable in tests. */
export type IpCommand = (args: readonly string[]) => Promise<string>;

/** The real `ip` command. */
export const ipCommand: IpCommand = async (args) => (await run('ip', [...args], { timeout: 10_000 })).stdout;

const isV6 = (ip: string) => ip.includes(':');
const hostPrefix = (ip: string) => (isV6(ip) ? 128 : 32);

/** The pod interface of one nodelet. */
export class PodInterface {
  constructor(
    readonly name: string,
    private readonly ip: IpCommand = ipCommand,
  ) {}

  /** Creates the bridge when missing, sets it up and puts the gateways (`10.244.1.1/24`) on it. */
  async ensure(gateways: readonly string[]): Promise<void> {
    try {
      await this.ip(['link', 'add', 'name', this.name, 'type', 'bridge']);
    } catch (e) {
      if (!/File exists/i.test(commandError(e))) throw this.failed(`create bridge ${this.name}`, e);
    }
    await this.must(['link', 'set', 'dev', this.name, 'up'], `set ${this.name} up`);
    for (const g of gateways) await this.must(['addr', 'replace', g, 'dev', this.name, ...(isV6(g) ? ['nodad'] : [])], `add ${g} to ${this.name}`);
  }

  /** Puts a pod IP on the bridge (idempotent). */
  async add(podIP: string): Promise<void> {
    await this.must(['addr', 'replace', `${podIP}/${hostPrefix(podIP)}`, 'dev', this.name, ...(isV6(podIP) ? ['nodad'] : [])], `add ${podIP} to ${this.name}`);
  }

  /** Removes a pod IP from the bridge; absent is fine. */
  async remove(podIP: string): Promise<void> {
    try {
      await this.ip(['addr', 'del', `${podIP}/${hostPrefix(podIP)}`, 'dev', this.name]);
    } catch (e) {
      // Not there: the kernel's EADDRNOTAVAIL, which iproute2 with extended acks prints as `Error: ipv4: Address not found.`
      if (!/Cannot assign requested address|Address not found|Cannot find device/i.test(commandError(e)))
        throw this.failed(`remove ${podIP} from ${this.name}`, e);
    }
  }

  /** The host-prefix (pod) addresses on the bridge. */
  async podAddresses(): Promise<string[]> {
    const out = await this.must(['-j', 'addr', 'show', 'dev', this.name], `list the addresses of ${this.name}`);
    const links = JSON.parse(out || '[]') as { addr_info?: { local?: string; prefixlen?: number }[] }[];
    return links.flatMap((l) => l.addr_info ?? []).flatMap((a) => (a.local && a.prefixlen === hostPrefix(a.local) ? [a.local] : []));
  }

  private async must(args: string[], what: string): Promise<string> {
    try {
      return await this.ip(args);
    } catch (e) {
      throw this.failed(what, e);
    }
  }

  private failed(what: string, e: unknown) {
    return nodeletError('NDL_NETWORK_INTERFACE', `${what}: ${commandError(e)}`, e);
  }
}

/** The most useful text of a failed `ip` run: its stderr, else the error. */
export function commandError(e: unknown): string {
  const stderr = (e as { stderr?: unknown })?.stderr;
  return typeof stderr === 'string' && stderr.trim() ? stderr.trim() : errorDetail(e);
}

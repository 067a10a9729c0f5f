/**
 * Pod IP allocation from the node's pod CIDRs (one address per CIDR, so a
 * dual-stack node gives a pod an IPv4 and an IPv6 address), recorded as one
 * small JSON file per pod under `<root-dir>/network/allocations/<podUID>.json`
 * (written to a temporary name and renamed, so a crash leaves either the old
 * or the new file). Upstream's host-local IPAM plugin keeps one file per IP in
 * the same spirit; a file per pod makes "release the pod" one unlink.
 *
 * Allocation is synchronous (the state is in memory, the file written before
 * returning), so two pods set up at once never get the same address. The
 * lowest free offset wins, so a released address is the next one handed out.
 *
 *   (no file) ──allocate──► allocated (file) ──release / releaseExcept──► (no file)
 *                              │ nodelet restart: load() ──► same IPs
 *                              └ CIDR changed: allocate() gives new IPs
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorDetail, nodeletError } from '../errors/index.ts';
import type { PodCidr } from './cidr.ts';

interface Allocation {
  uid: string;
  ips: string[];
}

const UID = /^[0-9A-Za-z-]{1,64}$/;

/** The pod IPs this node has handed out, persisted under a directory. */
export class IpAllocator {
  private readonly byUid = new Map<string, string[]>();

  /** `dir` holds one file per pod (created when missing); existing files are read now. */
  constructor(private readonly dir: string) {
    try {
      mkdirSync(dir, { recursive: true, mode: 0o750 });
      for (const f of readdirSync(dir)) {
        if (!f.endsWith('.json')) continue;
        const a = readAllocation(join(dir, f));
        if (a && UID.test(a.uid) && `${a.uid}.json` === f) this.byUid.set(a.uid, a.ips);
      }
    } catch (e) {
      throw nodeletError('NDL_NETWORK_STATE', `${dir}: ${errorDetail(e)}`, e);
    }
  }

  /** The IPs held by a pod, if any. */
  get(uid: string): readonly string[] | undefined {
    return this.byUid.get(uid);
  }

  /** Every pod UID holding IPs. */
  uids(): string[] {
    return [...this.byUid.keys()];
  }

  /**
   * The pod's IPs, one per CIDR in order: the recorded ones when they still lie in
   * `cidrs`, else the lowest free address of each. Throws `NDL_NETWORK_EXHAUSTED`
   * when a CIDR has no free address (nothing is recorded then).
   */
  allocate(uid: string, cidrs: readonly PodCidr[]): string[] {
    if (!UID.test(uid)) throw nodeletError('NDL_NETWORK_STATE', `invalid pod uid ${JSON.stringify(uid)}`);
    const held = this.byUid.get(uid);
    if (held && held.length === cidrs.length && cidrs.every((c, i) => usable(c, held[i]!))) return [...held];
    const ips = cidrs.map((c) => this.lowestFree(c, uid));
    this.write({ uid, ips });
    this.byUid.set(uid, ips);
    return [...ips];
  }

  /** Frees the pod's IPs; true when it held any. */
  release(uid: string): boolean {
    if (!this.byUid.has(uid)) return false;
    try {
      rmSync(join(this.dir, `${uid}.json`), { force: true });
    } catch (e) {
      throw nodeletError('NDL_NETWORK_STATE', `cannot remove the allocation of pod ${uid}: ${errorDetail(e)}`, e);
    }
    this.byUid.delete(uid);
    return true;
  }

  /** Frees the IPs of every pod not in `keep` (pods deleted while nodelet was down); returns the freed allocations. */
  releaseExcept(keep: ReadonlySet<string>): { uid: string; ips: string[] }[] {
    const gone = [...this.byUid.entries()].filter(([uid]) => !keep.has(uid)).map(([uid, ips]) => ({ uid, ips }));
    for (const g of gone) this.release(g.uid);
    return gone;
  }

  private lowestFree(c: PodCidr, uid: string): string {
    const used = new Set<bigint>();
    for (const [other, ips] of this.byUid) {
      if (other === uid) continue;
      for (const ip of ips) {
        const off = c.offsetOf(ip);
        if (off !== undefined) used.add(off);
      }
    }
    for (let off = c.firstOffset; off <= c.lastOffset; off++) if (!used.has(off)) return c.at(off);
    throw nodeletError('NDL_NETWORK_EXHAUSTED', `all ${used.size} pod addresses of ${c.text} are in use`);
  }

  private write(a: Allocation): void {
    const file = join(this.dir, `${a.uid}.json`);
    const tmp = `${file}.tmp`;
    try {
      writeFileSync(tmp, JSON.stringify(a) + '\n', { mode: 0o640 });
      renameSync(tmp, file);
    } catch (e) {
      throw nodeletError('NDL_NETWORK_STATE', `cannot record the allocation of pod ${a.uid}: ${errorDetail(e)}`, e);
    }
  }
}

function usable(c: PodCidr, ip: string): boolean {
  const off = c.offsetOf(ip);
  return off !== undefined && off >= c.firstOffset && off <= c.lastOffset;
}

function readAllocation(file: string): Allocation | undefined {
  try {
    const a = JSON.parse(readFileSync(file, 'utf8')) as Partial<Allocation>;
    if (typeof a.uid !== 'string' || !Array.isArray(a.ips) || !a.ips.every((ip) => typeof ip === 'string')) return undefined;
    return { uid: a.uid, ips: a.ips };
  } catch {
    return undefined;
  }
}

/**
 * Pod IP allocation from the node's pod CIDRs (one address per CIDR, so a
 * dual-stack node gives a pod an IPv4 and an IPv6 address), recorded as one
 * small JSON file per pod under `<root-dir>/network/allocations/<podUID>.json`
 * (written to a temporary name and renamed, so a crash leaves either the old
 * or the new file). Upstream's host-local IPAM plugin keeps one file per IP in
 * the same spirit; a file per pod makes "release the pod" one unlink.
 *
 * An address is reserved in memory before `allocate` first waits, so two pods
 * set up at once never get the same one; the file is then written off the main
 * thread (by the composition root's file writer: one round trip to its Perl helper)
 * and `allocate` resolves once it is on disk (a synchronous write per pod was 1.5 ms
 * of nodelet's main thread each under a 100-pod burst: bench/README.md).
 * Writes and removals of one pod's file run in order. The lowest free offset wins,
 * so a released address is the next one handed out; the offsets in use are indexed
 * per CIDR, so finding one does not parse every held address.
 *
 *   (no file) ──allocate──► allocated (file) ──release / releaseExcept──► (no file)
 *                              │ nodelet restart: load() ──► same IPs
 *                              └ CIDR changed: allocate() gives new IPs
 */
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { errorDetail, nodeletError } from '../errors/index.ts';
import { fileWriter, type FileWriter } from '../exec/index.ts';
import type { PodCidr } from './cidr.ts';

interface Allocation {
  uid: string;
  ips: string[];
}

const UID = /^[0-9A-Za-z-]{1,64}$/;

/** The pod IPs this node has handed out, persisted under a directory. */
export class IpAllocator {
  private readonly byUid = new Map<string, string[]>();
  /** Per CIDR (by text): the offsets held, and by which pod. Built on a CIDR's first use. */
  private readonly offsets = new Map<string, { readonly cidr: PodCidr; readonly held: Map<bigint, string> }>();
  /** The last file operation queued per pod (writes and removals of one file run in order). */
  private readonly fileOps = new Map<string, Promise<void>>();

  /**
   * `dir` holds one file per pod (created when missing); existing files are read now. `files`
   * writes them (default: through libuv's pool).
   */
  constructor(
    private readonly dir: string,
    private readonly files: FileWriter = fileWriter(undefined, 'NDL_NETWORK_STATE'),
  ) {
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
   * `cidrs`, else the lowest free address of each. Rejects with `NDL_NETWORK_EXHAUSTED`
   * when a CIDR has no free address, and with `NDL_NETWORK_STATE` when the record cannot
   * be written (nothing stays reserved then).
   */
  async allocate(uid: string, cidrs: readonly PodCidr[]): Promise<string[]> {
    if (!UID.test(uid)) throw nodeletError('NDL_NETWORK_STATE', `invalid pod uid ${JSON.stringify(uid)}`);
    const held = this.byUid.get(uid);
    if (held && held.length === cidrs.length && cidrs.every((c, i) => usable(c, held[i]!))) {
      await this.fileOps.get(uid); // a concurrent first allocation's write
      if (this.byUid.get(uid) !== held) return this.allocate(uid, cidrs);
      return [...held];
    }
    // Reserved before the first await: a concurrent allocation sees these offsets taken.
    const ips = cidrs.map((c) => this.lowestFree(c, uid));
    this.unindex(uid);
    this.byUid.set(uid, ips);
    this.index(uid, ips);
    try {
      await this.queueFileOp(uid, () => this.write({ uid, ips }));
    } catch (e) {
      if (this.byUid.get(uid) === ips) {
        this.unindex(uid);
        this.byUid.delete(uid);
      }
      throw e;
    }
    return [...ips];
  }

  /**
   * Frees the pod's IPs once its file is removed; resolves to true when it held any. When
   * the file cannot be removed it rejects and the addresses stay taken.
   */
  async release(uid: string): Promise<boolean> {
    if (!this.byUid.has(uid)) return false;
    await this.queueFileOp(uid, async () => {
      try {
        await rm(join(this.dir, `${uid}.json`), { force: true });
      } catch (e) {
        throw nodeletError('NDL_NETWORK_STATE', `cannot remove the allocation of pod ${uid}: ${errorDetail(e)}`, e);
      }
    });
    this.unindex(uid);
    this.byUid.delete(uid);
    return true;
  }

  /** Frees the IPs of every pod not in `keep` (pods deleted while nodelet was down); returns the freed allocations. */
  async releaseExcept(keep: ReadonlySet<string>): Promise<{ uid: string; ips: string[] }[]> {
    const gone = [...this.byUid.entries()].filter(([uid]) => !keep.has(uid)).map(([uid, ips]) => ({ uid, ips }));
    for (const g of gone) await this.release(g.uid);
    return gone;
  }

  private lowestFree(c: PodCidr, uid: string): string {
    const used = this.offsetsOf(c);
    for (let off = c.firstOffset; off <= c.lastOffset; off++) {
      const by = used.get(off);
      if (by === undefined || by === uid) return c.at(off);
    }
    throw nodeletError('NDL_NETWORK_EXHAUSTED', `all ${used.size} pod addresses of ${c.text} are in use`);
  }

  /** The offsets of `c` held now (indexed from the allocations on first use). */
  private offsetsOf(c: PodCidr): Map<bigint, string> {
    const have = this.offsets.get(c.text);
    if (have) return have.held;
    const m = new Map<bigint, string>();
    for (const [uid, ips] of this.byUid) {
      for (const ip of ips) {
        const off = c.offsetOf(ip);
        if (off !== undefined) m.set(off, uid);
      }
    }
    this.offsets.set(c.text, { cidr: c, held: m });
    return m;
  }

  private index(uid: string, ips: readonly string[]): void {
    for (const { cidr, held } of this.offsets.values()) {
      for (const ip of ips) {
        const off = cidr.offsetOf(ip);
        if (off !== undefined) held.set(off, uid);
      }
    }
  }

  private unindex(uid: string): void {
    const ips = this.byUid.get(uid);
    if (!ips) return;
    for (const { cidr, held } of this.offsets.values()) {
      for (const ip of ips) {
        const off = cidr.offsetOf(ip);
        if (off !== undefined && held.get(off) === uid) held.delete(off);
      }
    }
  }

  /** Runs `op` after the pod's earlier file operations; the chain survives a failure. */
  private queueFileOp(uid: string, op: () => Promise<void>): Promise<void> {
    const run = (this.fileOps.get(uid) ?? Promise.resolve()).then(op);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.fileOps.set(uid, settled);
    void settled.then(() => {
      if (this.fileOps.get(uid) === settled) this.fileOps.delete(uid);
    });
    return run;
  }

  private async write(a: Allocation): Promise<void> {
    try {
      await this.files.replace(join(this.dir, `${a.uid}.json`), JSON.stringify(a) + '\n', 0o640);
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

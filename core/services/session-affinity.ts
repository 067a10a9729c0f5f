/**
 * `sessionAffinity: ClientIP`: a client address keeps the endpoint it was given for a Service
 * port while it keeps connecting, as kube-proxy's `recent` match (iptables) or affinity sets
 * (nftables) do. An entry lives `timeoutSeconds` after the client's last connection (3 h by
 * default); an endpoint that is no longer usable is replaced by a fresh choice.
 *
 *   choose(key, client, usable) ──entry alive and its endpoint usable──► that endpoint (entry refreshed)
 *                               └─otherwise──► pick() ──► recorded for the client
 *
 * Expired entries go when they are next asked for and in a sweep every {@link SWEEP_EVERY}
 * recordings, so clients that went away do not accumulate.
 */
import type { EndpointInfo } from './service-model.ts';

/** Entries recorded between two sweeps of the expired ones. */
export const SWEEP_EVERY = 1024;

interface Entry {
  address: string;
  expiresAt: number;
}

/** The node's ClientIP affinity entries, for every Service port. */
export class SessionAffinity {
  private readonly entries = new Map<string, Entry>();
  private recorded = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * The endpoint of `usable` for `client` on the Service port `key` (with affinity `ttlMs`):
   * the one it had if still usable, else `pick(usable)`, remembered.
   */
  choose(key: string, client: string, ttlMs: number, usable: readonly EndpointInfo[], pick: (usable: readonly EndpointInfo[]) => EndpointInfo): EndpointInfo {
    const id = `${key}|${client}`;
    const now = this.now();
    const had = this.entries.get(id);
    if (had && had.expiresAt > now) {
      const ep = usable.find((e) => e.address === had.address);
      if (ep) {
        had.expiresAt = now + ttlMs;
        return ep;
      }
    }
    const ep = pick(usable);
    this.entries.set(id, { address: ep.address, expiresAt: now + ttlMs });
    if (++this.recorded % SWEEP_EVERY === 0) this.sweep(now);
    return ep;
  }

  /** Entries held (expired ones not yet swept included). */
  get size(): number {
    return this.entries.size;
  }

  private sweep(now: number): void {
    for (const [id, e] of this.entries) if (e.expiresAt <= now) this.entries.delete(id);
  }
}

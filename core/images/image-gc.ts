/**
 * Image garbage collection, as upstream's image GC manager: when the disk
 * usage of the filesystem holding the image store reaches
 * `imageGCHighThresholdPercent`, delete unused modules, least recently used
 * first, until usage would be at `imageGCLowThresholdPercent`.
 *
 *   every period: usage% = 100 - available*100/capacity
 *     usage% <  high ─▶ nothing
 *     usage% >= high ─▶ amountToFree = capacity*(100-low)/100 - available
 *                       candidates = blobs not in use, unused for at least minAge, oldest lastUsed first
 *                       delete until freed >= amountToFree (short ─▶ FreeDiskSpaceFailed)
 */
import { statfs } from 'node:fs/promises';
import type { Logger } from '@nodelet/plugin-api/v1';

/** Capacity and free space of a filesystem, in bytes. */
export interface DiskUsage {
  readonly capacityBytes: number;
  readonly availableBytes: number;
}

/** Measures the filesystem holding `path`. */
export type DiskUsageFn = (path: string) => Promise<DiskUsage>;

/** `statfs(2)` of the filesystem holding `path` (blocks available to unprivileged users count as free, like upstream's cadvisor). */
export async function statfsUsage(path: string): Promise<DiskUsage> {
  const s = await statfs(path);
  return { capacityBytes: s.blocks * s.bsize, availableBytes: s.bavail * s.bsize };
}

/** The thresholds (upstream `imageGCHighThresholdPercent` / `imageGCLowThresholdPercent` / `imageMinimumGCAge`). */
export interface ImageGcPolicy {
  readonly highThresholdPercent: number;
  readonly lowThresholdPercent: number;
  /** A module used more recently than this is never deleted (upstream default 2 minutes). */
  readonly minAgeMs?: number;
}

/** What one GC pass did. */
export interface ImageGcResult {
  readonly usagePercent: number;
  /** Bytes the pass had to free (0 when usage was below the high threshold). */
  readonly amountToFree: number;
  readonly freedBytes: number;
  /** Digests of the deleted blobs, in deletion order. */
  readonly removed: readonly string[];
  /** Set when it could not free `amountToFree` (upstream's FreeDiskSpaceFailed message). */
  readonly failure?: string;
}

/** A blob the collector may delete. */
export interface GcCandidate {
  readonly digest: string;
  readonly lastUsed: number;
}

/** The upstream percentage: `100 - available*100/capacity` (integer division). */
export function usagePercent(u: DiskUsage): number {
  return u.capacityBytes > 0 ? 100 - Math.floor((u.availableBytes * 100) / u.capacityBytes) : 0;
}

/**
 * Plans and performs one pass: `remove` deletes a blob and returns the bytes freed.
 * Blobs in `inUse` and those used within `minAgeMs` of `now` are kept.
 */
export async function collect(
  usage: DiskUsage,
  policy: ImageGcPolicy,
  blobs: readonly GcCandidate[],
  inUse: ReadonlySet<string>,
  remove: (digest: string) => Promise<number>,
  now = Date.now(),
): Promise<ImageGcResult> {
  const percent = usagePercent(usage);
  if (percent < policy.highThresholdPercent) return { usagePercent: percent, amountToFree: 0, freedBytes: 0, removed: [] };
  const amountToFree = Math.floor((usage.capacityBytes * (100 - policy.lowThresholdPercent)) / 100) - usage.availableBytes;
  const minAge = policy.minAgeMs ?? 0;
  const candidates = blobs.filter((b) => !inUse.has(b.digest) && now - b.lastUsed >= minAge).sort((a, b) => a.lastUsed - b.lastUsed);
  let freedBytes = 0;
  const removed: string[] = [];
  for (const c of candidates) {
    if (freedBytes >= amountToFree) break;
    freedBytes += await remove(c.digest);
    removed.push(c.digest);
  }
  const failure =
    freedBytes < amountToFree
      ? `Failed to garbage collect required amount of images. Attempted to free ${amountToFree} bytes, but only found ${freedBytes} bytes eligible to free.`
      : undefined;
  return { usagePercent: percent, amountToFree, freedBytes, removed, ...(failure && { failure }) };
}

/** Runs GC passes every `periodMs` (upstream ImageGCPeriod: 5 minutes) until stopped. */
export function startPeriodicGc(
  pass: () => Promise<ImageGcResult>,
  opts: {
    periodMs?: number;
    log: Logger;
    onFailure?: (message: string) => void;
  },
): () => void {
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      const r = await pass();
      if (r.removed.length > 0)
        opts.log.info({ freedBytes: r.freedBytes, removed: r.removed.length, usagePercent: r.usagePercent }, 'image garbage collection freed space');
      if (r.failure) {
        opts.log.warn({ usagePercent: r.usagePercent }, r.failure);
        opts.onFailure?.(r.failure);
      }
    } catch (e) {
      opts.log.warn({ err: e instanceof Error ? e.message : String(e) }, 'image garbage collection failed');
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void tick(), opts.periodMs ?? 5 * 60_000);
  timer.unref();
  return () => clearInterval(timer);
}

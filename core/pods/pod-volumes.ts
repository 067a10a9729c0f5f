/**
 * A pod's volumes as its worker keeps them, for both provider kinds: set up
 * on the first sync, then re-synced (ConfigMap/Secret/projected contents,
 * token refresh) at most once every {@link VOLUME_RESYNC_MS}.
 *
 * Decided once for both workers: upstream re-syncs contents on every pod sync,
 * and a pod is synced by the periodic resync (1 min) plus every event; nodelet
 * wakes a pod far more often (each container exit, each back-off expiry, each
 * `statusChanged()` of a pod provider), so contents follow the periodic
 * cadence instead — the same as upstream with its object cache TTL, without
 * rewriting volumes on every wake-up. The clock starts when a preparation
 * starts, so a 1-min periodic resync is never skipped by a few ms. A change
 * of a watched ConfigMap/Secret the pod refers to (`objectsChangedSince`,
 * core/volumes/object-watch-manager.ts) re-syncs at once, without waiting.
 *
 *   none ──prepare ok──► prepared ──(≥ 1 min since the last start) prepare ok──► prepared
 *    │  ▲                   │
 *    │  └─ back-off ◄───────┴── prepare fails: FailedMount (or the preparer's reason) events, re-queue (≤ 30 s)
 *    └── prepare fails ──┘      (a failed re-sync keeps the old contents; the pod starts nothing until one succeeds)
 *
 * A volume prepared as unavailable (an image volume whose pull failed: the pod runs, the
 * containers mounting it wait) names when to try again (`unavailable.retryAt`): the pod is
 * re-queued then, and that sync prepares the volumes again without waiting for the minute.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Backoff } from '../backoff/index.ts';
import type { PodSetup, PreparedPod } from './pod-setup.ts';

/** How often a running pod's volumes are re-synced (upstream's periodic pod sync is 1 min). */
export const VOLUME_RESYNC_MS = 60_000;

/** The longest wait before retrying a failed volume set-up. */
const MAX_RETRY_MS = 30_000;

/** What {@link PodVolumes} needs from its worker. */
export interface PodVolumesDeps {
  setup: PodSetup;
  /** Retries of volume set-up (upstream: 500 ms doubling to 2m2s). */
  backoff: Backoff;
  /** Re-queues the pod's key after `ms`. */
  requeue(ms: number): void;
  /** Records an event on the pod. */
  event(type: 'Normal' | 'Warning', reason: string, note: string): void;
  /** The clock (tests inject one). */
  now?: () => number;
}

const NO_VOLUMES: PreparedPod = new Map();

/** One pod's prepared volumes and their re-sync cadence. */
export class PodVolumes {
  private value?: PreparedPod;
  private ready = false;
  private startedAt = 0;

  constructor(private readonly d: PodVolumesDeps) {}

  /** What `PodSetup.prepare` returned last (no volume until the first success). */
  get prepared(): PreparedPod {
    return this.value ?? NO_VOLUMES;
  }

  /** The earliest `retryAt` of a volume prepared as unavailable, if any. */
  private retryAt(): number | undefined {
    let at: number | undefined;
    for (const v of this.value?.values() ?? []) {
      const r = v.unavailable?.retryAt;
      if (r !== undefined && (at === undefined || r < at)) at = r;
    }
    return at;
  }

  /** True once the volumes were set up (the sandbox is ready). */
  get isReady(): boolean {
    return this.ready;
  }

  /** Sets up or re-syncs the volumes when due; false when they failed (events and re-queue done). */
  async sync(pod: V1Pod): Promise<boolean> {
    const now = this.d.now ?? Date.now;
    const t0 = now();
    const retryAt = this.retryAt();
    const due = retryAt !== undefined && retryAt <= t0;
    if (this.ready && !due && t0 - this.startedAt < VOLUME_RESYNC_MS && !this.d.setup.objectsChangedSince?.(pod, this.startedAt)) return true;
    const key = `${pod.metadata!.uid}/volumes`;
    try {
      this.value = await this.d.setup.prepare(pod);
      this.ready = true;
      this.startedAt = t0;
      this.d.backoff.reset(key);
      const next = this.retryAt();
      if (next !== undefined) this.d.requeue(Math.max(0, next - now()));
      return true;
    } catch (e) {
      const notes = (e as { messages?: string[] }).messages ?? [e instanceof Error ? e.message : String(e)];
      // A pod-resource preparer's failure carries its own reason (FailedPrepareDynamicResources).
      const reason = (e as { reason?: string }).reason ?? 'FailedMount';
      for (const note of notes) this.d.event('Warning', reason, note);
      this.d.requeue(Math.min(this.d.backoff.next(key), MAX_RETRY_MS));
      return false;
    }
  }
}

/**
 * The resize conditions of each pod, as upstream's status manager keeps them
 * (`pkg/kubelet/status/status_manager.go`: `podResizeConditions`): `PodResizePending`
 * (reason `Infeasible` or `Deferred`) and `PodResizeInProgress` (no reason, or `Error`), each
 * with the generation it is about. The status contributor (resize-status.ts) puts them in the
 * pod's status; nodelet's own restart picks them up from the API status (`backfill`).
 *
 *   setPending(reason ≠ Infeasible → Deferred) ── lastTransitionTime kept while the reason is the same
 *   setInProgress("", "")   keeps the reason, message and generation of one already set
 *   setInProgress(Error, m) an Error on the set condition (generation kept)
 *   clearInProgress         returns the generation it was about (for ResizeCompleted)
 */
import type { V1PodCondition } from '@kubernetes/client-node';

/** `PodResizePending` and `PodResizeInProgress` (core/v1's condition types). */
export const PENDING = 'PodResizePending';
export const IN_PROGRESS = 'PodResizeInProgress';
/** The reasons upstream gives (core/v1 `PodReasonInfeasible`, `PodReasonDeferred`, `PodReasonError`). */
export const INFEASIBLE = 'Infeasible';
export const DEFERRED = 'Deferred';
export const ERROR = 'Error';

/** A resize condition as posted. */
export interface ResizeCondition {
  readonly type: typeof PENDING | typeof IN_PROGRESS;
  readonly status: 'True';
  readonly reason: string;
  readonly message: string;
  readonly observedGeneration: number;
  readonly lastProbeTime: Date;
  readonly lastTransitionTime: Date;
}

interface PodConditions {
  pending?: ResizeCondition;
  inProgress?: ResizeCondition;
}

/** Upstream `updatedPodResizeCondition`: probed now; the transition time is kept while the reason is the same. */
function updated(
  type: ResizeCondition['type'],
  old: ResizeCondition | undefined,
  reason: string,
  message: string,
  generation: number,
  now: Date,
): ResizeCondition {
  const lastTransitionTime = old && old.reason === reason ? old.lastTransitionTime : now;
  return { type, status: 'True', reason, message, observedGeneration: generation, lastProbeTime: now, lastTransitionTime };
}

/** The same condition, probe and transition times aside. */
const equal = (a: ResizeCondition | undefined, b: ResizeCondition | undefined) =>
  a && b ? a.reason === b.reason && a.message === b.message && a.observedGeneration === b.observedGeneration : a === b;

/** Every pod's resize conditions. */
export class ResizeConditions {
  private readonly byUid = new Map<string, PodConditions>();

  constructor(private readonly now: () => Date = () => new Date()) {}

  /** Pod `uid`'s conditions, `PodResizePending` first (upstream's order). */
  list(uid: string): ResizeCondition[] {
    const c = this.byUid.get(uid);
    return [c?.pending, c?.inProgress].filter((x): x is ResizeCondition => x !== undefined);
  }

  private entry(uid: string): PodConditions {
    let c = this.byUid.get(uid);
    if (!c) this.byUid.set(uid, (c = {}));
    return c;
  }

  /** Sets `PodResizePending` (a reason other than `Infeasible` becomes `Deferred`); true when its reason or generation changed. */
  setPending(uid: string, reason: string, message: string, generation: number): boolean {
    const c = this.entry(uid);
    const before = c.pending;
    const r = reason === INFEASIBLE ? INFEASIBLE : DEFERRED;
    c.pending = updated(PENDING, before, r, message, generation, this.now());
    return !before || before.reason !== r || before.observedGeneration !== generation;
  }

  /**
   * Sets `PodResizeInProgress`. A condition already set keeps its generation (clear it first to
   * change that), and its reason and message when none are given. Returns the condition's
   * generation and whether it changed.
   */
  setInProgress(uid: string, reason: string, message: string, generation: number): { generation: number; changed: boolean } {
    const c = this.entry(uid);
    const before = c.inProgress;
    if (before) {
      if (reason === '' && message === '') {
        reason = before.reason;
        message = before.message;
      }
      generation = before.observedGeneration;
    }
    c.inProgress = updated(IN_PROGRESS, before, reason, message, generation, this.now());
    return { generation, changed: !equal(before, c.inProgress) };
  }

  /** Clears `PodResizePending`. */
  clearPending(uid: string): void {
    const c = this.byUid.get(uid);
    if (c) c.pending = undefined;
  }

  /** Clears `PodResizeInProgress`; returns the generation it was about, undefined when it was not set. */
  clearInProgress(uid: string): number | undefined {
    const c = this.byUid.get(uid);
    const g = c?.inProgress?.observedGeneration;
    if (c) c.inProgress = undefined;
    return g;
  }

  /** True while the pod's resize is `Deferred`. */
  isDeferred(uid: string): boolean {
    return this.byUid.get(uid)?.pending?.reason === DEFERRED;
  }

  /** True while the pod's resize is `Infeasible`. */
  isInfeasible(uid: string): boolean {
    return this.byUid.get(uid)?.pending?.reason === INFEASIBLE;
  }

  /** Upstream `BackfillPodResizeConditions`: the conditions a pod's API status shows, taken over after a restart (where none are kept yet). */
  backfill(uid: string, conditions: readonly V1PodCondition[] | undefined): void {
    if (this.byUid.has(uid)) return;
    for (const c of conditions ?? []) {
      if ((c.type !== PENDING && c.type !== IN_PROGRESS) || c.status !== 'True') continue;
      const at = c.lastTransitionTime ? new Date(c.lastTransitionTime) : this.now();
      const cond: ResizeCondition = {
        type: c.type,
        status: 'True',
        reason: c.reason ?? '',
        message: c.message ?? '',
        observedGeneration: c.observedGeneration ?? 0,
        lastProbeTime: c.lastProbeTime ? new Date(c.lastProbeTime) : at,
        lastTransitionTime: at,
      };
      if (c.type === PENDING) this.entry(uid).pending = cond;
      else this.entry(uid).inProgress = cond;
    }
  }

  /** Drops pod `uid`. */
  forget(uid: string): void {
    this.byUid.delete(uid);
  }
}

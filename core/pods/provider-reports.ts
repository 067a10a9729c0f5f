/**
 * What a `PodProvider` reported about one pod: the last good `getPodStatus`
 * report (a bad or missing one is logged and shown as a `ProviderStatusInvalid`
 * event once per distinct problem, and the last good one stays), and each
 * container's last termination, for `lastState`.
 *
 * The status path is synchronous (a sync computes the status and posts it), and
 * `getPodStatus` may answer with a promise: then the last good report serves
 * this sync, one call is in flight at a time, and when its answer differs from
 * the last good report the pod is synced again (`statusChanged`) to post it.
 */
import type { V1ContainerStateTerminated } from '@kubernetes/client-node';
import type { ContainerStatusReport, Logger, PodProvider, PodRef, PodStatusReport } from '@nodelet/plugin-api/v1';
import type { RunnerContainer } from './container-view.ts';
import { containerState, reportProblem } from './pod-status-report.ts';

/** How long an asynchronous `getPodStatus` may take before it is given up on and called again. */
export const STATUS_ANSWER_MS = 30_000;

const msg = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** A promise, from this realm or not, or any other thenable (a provider may use its own promise library). */
const isThenable = (r: unknown): r is PromiseLike<unknown> =>
  (typeof r === 'object' || typeof r === 'function') && r !== null && typeof (r as { then?: unknown }).then === 'function';

/** What {@link ProviderReports} needs from its driver. */
export interface ProviderReportsDeps {
  provider: PodProvider;
  /** Records an event on the pod. */
  event(type: 'Normal' | 'Warning', reason: string, note: string): void;
  /** The pod's logger, once it has a context. */
  log(): Logger | undefined;
  /** True once the pod is being deleted (a missing report is expected then). */
  terminating(): boolean;
  /** Asks for another sync of the pod (an asynchronous report arrived that changes its status). */
  statusChanged(): void;
}

/** The reports of one pod owned by a `PodProvider`. */
export class ProviderReports {
  /** The last good report. */
  last?: PodStatusReport;
  private badReport?: string;
  /** When the asynchronous `getPodStatus` in flight was called (Date.now()), if one is. */
  private pendingSince?: number;
  /** Counts the calls: an answer to a call given up on is ignored. */
  private call = 0;
  private readonly ends = new Map<string, { restartCount: number; t: V1ContainerStateTerminated }>();

  constructor(private readonly d: ProviderReportsDeps) {}

  /** The provider's current report (validated), or the last good one; remembers terminations for `lastState`. */
  read(ref: PodRef): PodStatusReport | undefined {
    if (this.pendingSince !== undefined) {
      if (Date.now() - this.pendingSince < STATUS_ANSWER_MS) return this.last;
      // Never settled: given up on, so that one hung call does not freeze the pod's status.
      this.complain(`getPodStatus did not answer within ${STATUS_ANSWER_MS / 1000}s`);
      this.pendingSince = undefined;
    }
    let r: unknown;
    try {
      r = this.d.provider.pods.getPodStatus(ref);
    } catch (e) {
      this.complain(`getPodStatus failed: ${msg(e)}`);
      return this.last;
    }
    if (isThenable(r)) {
      const call = ++this.call;
      this.pendingSince = Date.now();
      const before = JSON.stringify(this.last);
      Promise.resolve(r).then(
        (v: unknown) => {
          if (call !== this.call) return;
          this.pendingSince = undefined;
          this.accept(v);
          if (JSON.stringify(this.last) !== before) this.d.statusChanged();
        },
        (e: unknown) => {
          if (call !== this.call) return;
          this.pendingSince = undefined;
          this.complain(`getPodStatus failed: ${msg(e)}`);
        },
      );
      return this.last;
    }
    return this.accept(r);
  }

  /** Takes report `r` if it is good (else complains); returns the last good one. */
  private accept(r: unknown): PodStatusReport | undefined {
    if (r === undefined) {
      if (!this.d.terminating() && !this.last) this.complain('the provider does not know this pod after createPod');
      return this.last;
    }
    const problem = reportProblem(r);
    if (problem) {
      this.complain(problem);
      return this.last;
    }
    this.badReport = undefined;
    this.last = r as PodStatusReport;
    for (const [init, list] of [
      [true, this.last.initContainers],
      [false, this.last.containers],
    ] as const) {
      for (const c of list ?? []) this.remember(init, c);
    }
    return this.last;
  }

  /** Logs a bad report once per distinct problem (a Warning event too, so `kubectl describe` shows it). */
  private complain(problem: string): void {
    if (problem === this.badReport) return;
    this.badReport = problem;
    this.d.log()?.warn({ provider: this.d.provider.name }, `provider status unusable: ${problem}`);
    this.d.event('Warning', 'ProviderStatusInvalid', `provider "${this.d.provider.name}": ${problem}`);
  }

  private remember(init: boolean, c: ContainerStatusReport): void {
    const t = containerState(c).terminated;
    if (t) this.ends.set(`${init}/${c.name}`, { restartCount: c.restartCount ?? 0, t });
  }

  /** The termination before the current run of a container (its `lastState`), once the provider reported it. */
  lastTermination(name: string, init: boolean, cur: ContainerStatusReport): V1ContainerStateTerminated | undefined {
    const e = this.ends.get(`${init}/${name}`);
    if (!e) return undefined;
    const n = cur.restartCount ?? 0;
    return e.restartCount < n || (e.restartCount === n && 'waiting' in cur.state) ? e.t : undefined;
  }

  /** A container's log view: its latest reported run (undefined until it has run). */
  container(name: string): RunnerContainer | undefined {
    const c = (this.last?.containers ?? []).concat(this.last?.initContainers ?? []).find((x) => x.name === name);
    if (!c) return undefined;
    const running = 'running' in c.state;
    if (!running && !('terminated' in c.state) && !((c.restartCount ?? 0) > 0)) return undefined;
    return { restartCount: c.restartCount ?? 0, running };
  }
}

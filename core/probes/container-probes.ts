/**
 * The probes of one container run (upstream prober_manager's workers of one
 * container plus its results cache): a worker per probe the container
 * declares, `started()`/`ready()` from their results, and a kill request when
 * a Liveness or Startup probe fails. A new run (a restart) gets a new
 * `ContainerProbes`, so results never leak from one run to the next.
 *
 * Status (upstream `UpdatePodStatus`): `started` is true without a Startup
 * probe, else once it succeeded; `ready` needs `started`, and then the
 * Readiness probe's success (true without one). Readiness and Liveness wait
 * for the Startup probe (startup gating).
 */
import type { V1Container, V1Probe } from '@kubernetes/client-node';
import type { Agent } from 'undici';
import { countProbe, type ProbeSeries } from '../metrics/index.ts';
import type { ProbeKind, ProbeTarget } from './probe-types.ts';
import { probeSettings } from './probe-settings.ts';
import { ProbeWorker, type ProbeResult } from './probe-worker.ts';
import { runAction } from './run-action.ts';

/** What the container's owner (the container driver) hears from its probes. */
export interface ContainerProbeEvents {
  /** `started()` or `ready()` may have changed: post the status (only a change is written). */
  changed(): void;
  /** A Liveness or Startup probe failed: kill the container (the restart policy decides the rest); `graceMs` from the probe, if it sets one. */
  kill(kind: 'Liveness' | 'Startup', output: string, graceMs: number | undefined): void;
  /** An `Unhealthy` or `ProbeWarning` event on the container. */
  event(type: 'Normal' | 'Warning', reason: string, message: string): void;
}

/** One run of a container, as its probes see it. */
export interface ContainerRun {
  container: V1Container;
  startedAt: Date;
  target: ProbeTarget;
  series: ProbeSeries;
}

/** The probes of one container run; see the header. */
export class ContainerProbes {
  private readonly workers = new Map<ProbeKind, ProbeWorker>();
  private stopped = false;

  constructor(run: ContainerRun, agent: () => Agent, on: ContainerProbeEvents, now?: () => number) {
    const c = run.container;
    const decl: [ProbeKind, V1Probe | undefined][] = [
      ['Startup', c.startupProbe],
      ['Readiness', c.readinessProbe],
      ['Liveness', c.livenessProbe],
    ];
    for (const [kind, probe] of decl) {
      if (!probe) continue;
      const settings = probeSettings(kind, probe);
      const w: ProbeWorker = new ProbeWorker({
        kind,
        settings,
        startedAt: run.startedAt,
        now,
        check: () => runAction(probe, run.target, settings.timeoutMs, agent()),
        gate: kind === 'Startup' ? undefined : () => this.started(),
        observed: (r) => countProbe(run.series, kind, r),
        event: (reason, message) => on.event('Warning', reason, message),
        onResult: (r, output) => this.onResult(kind, r, output, settings.terminationGraceMs, on),
      });
      this.workers.set(kind, w);
    }
  }

  /** True when the container declares at least one probe. */
  get any(): boolean {
    return this.workers.size > 0;
  }

  /** Starts every worker. */
  start(): void {
    for (const w of this.workers.values()) w.start();
  }

  private onResult(kind: ProbeKind, r: ProbeResult, output: string, graceMs: number | undefined, on: ContainerProbeEvents): void {
    if (this.stopped) return;
    if (kind === 'Startup' && r === 'success') {
      for (const [k, w] of this.workers) if (k !== 'Startup') w.wake();
    }
    if (kind !== 'Readiness' && r === 'failure') on.kill(kind, output, graceMs);
    on.changed();
  }

  /** Upstream's `started`: no Startup probe, or it succeeded. */
  started(): boolean {
    const s = this.workers.get('Startup');
    return !s || s.result === 'success';
  }

  /** Upstream's `ready`: started, and no Readiness probe or it succeeded. */
  ready(): boolean {
    if (!this.started()) return false;
    const r = this.workers.get('Readiness');
    return !r || r.result === 'success';
  }

  /** Stops every worker (the run ended, or the pod goes). */
  stop(): void {
    this.stopped = true;
    for (const w of this.workers.values()) w.stop();
  }
}

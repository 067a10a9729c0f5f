/**
 * One probe of one container run (upstream pkg/kubelet/prober/worker.go): it
 * checks every `periodMs`, counts equal results in a row and publishes a
 * result once a threshold is reached.
 *
 *   idle ──start──► delayed (initialDelaySeconds after the container started)
 *                      │
 *                      ▼          gated? (a startup probe has not succeeded yet) ──► skip this tick
 *                   probing ◄──── every periodMs ────┐
 *                      │ check (timeoutSeconds)      │
 *                      ├─ unknown ──► ignored ───────┤
 *                      ├─ success × successThreshold ──► result success ─┤ (Startup: ──► done)
 *                      └─ failure × failureThreshold ──► result failure ─┤ (Liveness/Startup: ──► on hold,
 *                                                                        │   the container is killed)
 *   stop() (the container ended, the pod goes) ──► stopped ◄─────────────┘
 *
 * The initial result is upstream's: Readiness `failure` (not ready until a
 * check succeeded), Liveness `success`, Startup `unknown`. A `warning` check
 * (a redirect to another host) counts as a success and is reported as
 * `ProbeWarning`; every failed check is reported as `Unhealthy`
 * (`<Kind> probe failed: <output>`), like upstream's prober.
 */
import type { CheckOutcome, CheckResult, ProbeKind } from './probe-types.ts';
import type { ProbeSettings } from './probe-settings.ts';

/** A published probe result (`unknown` only for a Startup probe that has not decided yet). */
export type ProbeResult = 'success' | 'failure' | 'unknown';

/** What a worker needs from outside. */
export interface ProbeWorkerDeps {
  kind: ProbeKind;
  settings: ProbeSettings;
  /** When the container run started (the initial delay counts from here). */
  startedAt: Date;
  /** Runs one check (its own timeout included). */
  check(): Promise<CheckOutcome>;
  /** False while checks must wait (Readiness/Liveness before the Startup probe succeeded). */
  gate?(): boolean;
  /** The published result changed. */
  onResult(result: ProbeResult, output: string): void;
  /** One check ran (counts `prober_probe_total`). */
  observed(result: CheckResult): void;
  /** A failed check (`Unhealthy`) or a warning (`ProbeWarning`). */
  event(reason: 'Unhealthy' | 'ProbeWarning', message: string): void;
  /** Milliseconds since the epoch (tests pass a fake clock with fake timers). */
  now?(): number;
}

const initial = (kind: ProbeKind): ProbeResult => (kind === 'Readiness' ? 'failure' : kind === 'Liveness' ? 'success' : 'unknown');

/** One probe's worker; see the sketch at the top. */
export class ProbeWorker {
  private resultNow: ProbeResult;
  private last?: 'success' | 'failure';
  private run = 0;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private onHold = false;
  private checking = false;

  constructor(private readonly d: ProbeWorkerDeps) {
    this.resultNow = initial(d.kind);
  }

  /** The published result. */
  get result(): ProbeResult {
    return this.resultNow;
  }

  /** Starts probing: the first check once the initial delay has passed (or at once). */
  start(): void {
    const now = this.d.now?.() ?? Date.now();
    const wait = Math.max(0, this.d.startedAt.getTime() + this.d.settings.initialDelayMs - now);
    this.schedule(wait);
  }

  /** Stops for good (the container run ended or the pod is going). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** Gated workers call this when the gate opens, so they need not wait a whole period. */
  wake(): void {
    if (this.stopped || this.onHold || this.checking) return;
    clearTimeout(this.timer);
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.stopped || this.onHold) return;
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref?.();
  }

  private async tick(): Promise<void> {
    if (this.stopped || this.onHold) return;
    if (this.d.gate && !this.d.gate()) return this.schedule(this.d.settings.periodMs);
    const began = this.d.now?.() ?? Date.now();
    this.checking = true;
    let out: CheckOutcome;
    try {
      out = await this.d.check();
    } catch (e) {
      out = { result: 'unknown', output: (e as Error).message };
    } finally {
      this.checking = false;
    }
    if (this.stopped) return;
    this.d.observed(out.result);
    this.apply(out);
    // a ticker, as upstream: the next check is a period after this one began, not after it ended
    this.schedule(Math.max(0, began + this.d.settings.periodMs - (this.d.now?.() ?? Date.now())));
  }

  private apply(out: CheckOutcome): void {
    if (out.result === 'unknown') return;
    if (out.result === 'failure') this.d.event('Unhealthy', `${this.d.kind} probe failed: ${out.output}`);
    if (out.result === 'warning') this.d.event('ProbeWarning', `${this.d.kind} probe warning: ${out.output}`);
    const r = out.result === 'failure' ? 'failure' : 'success';
    if (r === this.last) this.run++;
    else {
      this.last = r;
      this.run = 1;
    }
    const s = this.d.settings;
    if ((r === 'failure' && this.run < s.failureThreshold) || (r === 'success' && this.run < s.successThreshold)) return;
    const changed = r !== this.resultNow;
    this.resultNow = r;
    if (this.d.kind === 'Startup' && r === 'success') this.stop();
    if (this.d.kind !== 'Readiness' && r === 'failure') {
      // Upstream puts the worker on hold until the container is restarted (a new run gets a new worker).
      this.onHold = true;
      this.run = 0;
    }
    if (changed || (this.d.kind !== 'Readiness' && r === 'failure')) this.d.onResult(r, out.output);
  }
}

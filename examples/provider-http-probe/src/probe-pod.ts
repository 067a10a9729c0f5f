/**
 * One pod of the http-probe provider: the work the common pod states
 * (`podStates`) delegate, and the container statuses it reports.
 *
 *   ImagePull     resolve each URL's host name (a failure is ImagePullBackOff)
 *   Initializing  run the init containers' probes one by one (a failure is Error)
 *   Starting      start every app container's probe
 *   Running       wait for all of them; the first non-zero exit is the pod's
 *   Terminated    stop the probes still running (exit 143)
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { type ContainerStatusReport, type PodLifecycleContext, type PodObject, type PodStatusReport } from '@nodelet/plugin-api/v1';
import { createBackoff, CriLogWriter, type BackoffOptions, type PodMachineContext } from '@nodelet/plugin-api/v1/toolkit';
import { runProbe, type ProbeExit } from './probe.ts';
import { parseProbeArgs, parseProbeUrl } from './probe-spec.ts';

/** Settings shared by every pod of a provider. */
export interface ProbePodOptions {
  readonly allowHosts?: readonly string[];
  readonly backoff?: BackoffOptions;
  /** Resolves a host name (default: `dns.lookup`); rejects when it cannot. */
  readonly resolveHost?: (host: string) => Promise<unknown>;
  readonly fetch?: typeof fetch;
}

interface Run {
  restartCount: number;
  state: ContainerStatusReport['state'];
  containerID?: string;
  ran: boolean;
  done?: Promise<ProbeExit>;
}

/** Waiting reasons for containers that have not run, by the pod state's reason. */
const WAITING: Record<string, string> = { ImagePullBackOff: 'ImagePullBackOff', PodInitializing: 'PodInitializing', Error: 'CreateContainerError' };

/** The machine context and status of one pod. */
export class ProbePod implements PodMachineContext {
  readonly restartPolicy: 'Always' | 'OnFailure' | 'Never';
  private readonly runs = new Map<string, Run>();
  private readonly stopping = new AbortController();
  private readonly back: ReturnType<typeof createBackoff>;
  readonly backoff: PodMachineContext['backoff'];
  readonly resetBackoff: PodMachineContext['resetBackoff'];

  constructor(
    private readonly pod: PodObject,
    private readonly ctx: PodLifecycleContext,
    private readonly o: ProbePodOptions = {},
  ) {
    this.restartPolicy = pod.spec.restartPolicy ?? 'Always';
    this.back = createBackoff(o.backoff);
    this.backoff = (kind, signal) => this.back.backoff(kind, signal);
    this.resetBackoff = (kind) => this.back.resetBackoff(kind);
    for (const [init, list] of [
      [true, pod.spec.initContainers ?? []],
      [false, pod.spec.containers],
    ] as const) {
      for (const c of list) this.runs.set(key(init, c.name), { restartCount: 0, ran: false, state: { waiting: { reason: 'ContainerCreating' } } });
    }
  }

  private specs(init: boolean) {
    return (init ? this.pod.spec.initContainers : this.pod.spec.containers) ?? [];
  }

  async pullImages(signal: AbortSignal): Promise<void> {
    const hosts = new Set(
      [...this.specs(true), ...this.specs(false)].map((c) => parseProbeUrl(c.name, c.image, this.o.allowHosts).hostname.replace(/^\[|\]$/g, '')),
    );
    for (const host of hosts) {
      if (signal.aborted) return;
      if (isIP(host)) continue;
      try {
        await (this.o.resolveHost ?? lookup)(host);
      } catch (e) {
        throw new Error(`cannot resolve host "${host}": ${(e as { code?: string }).code ?? (e as Error).message}`);
      }
    }
  }

  async runInitContainers(signal: AbortSignal): Promise<void> {
    for (const c of this.specs(true)) {
      const exit = await (await this.launch(true, c.name, signal)).done;
      if (exit.exitCode !== 0) throw new Error(`init container "${c.name}" failed: ${exit.message ?? `exit code ${exit.exitCode}`}`);
    }
  }

  async start(signal: AbortSignal): Promise<void> {
    for (const c of this.specs(false)) await this.launch(false, c.name, signal);
  }

  async wait(): Promise<{ exitCode: number; message?: string }> {
    const exits = await Promise.all(this.specs(false).map(async (c) => ({ name: c.name, exit: await this.runs.get(key(false, c.name))!.done! })));
    const failed = exits.find((x) => x.exit.exitCode !== 0);
    return failed
      ? { exitCode: failed.exit.exitCode, message: `container "${failed.name}": ${failed.exit.message ?? `exit code ${failed.exit.exitCode}`}` }
      : { exitCode: 0 };
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.all([...this.runs.values()].map(async (r) => r.done));
  }

  /** Starts one container's probe; resolves once it runs, with the promise of its exit. */
  private async launch(init: boolean, name: string, signal: AbortSignal): Promise<{ done: Promise<ProbeExit> }> {
    const run = this.runs.get(key(init, name))!;
    const resolved = await this.ctx.resolveContainer(name);
    const spec = { url: parseProbeUrl(name, resolved.image, this.o.allowHosts), ...parseProbeArgs(name, resolved.argv.slice(1)) };
    const restartCount = run.ran ? run.restartCount + 1 : 0;
    const log = new CriLogWriter(this.ctx.logPath(name, restartCount));
    const startedAt = new Date();
    Object.assign(run, {
      ran: true,
      restartCount,
      containerID: `http-probe://${this.pod.metadata.uid.slice(0, 8)}-${name}-${restartCount}`,
      state: { running: { startedAt } },
    });
    this.ctx.statusChanged();
    run.done = runProbe(spec, log, AbortSignal.any([signal, this.stopping.signal]), this.o.fetch).then((exit) => {
      log.close();
      run.state = { terminated: { ...exit, startedAt } };
      this.ctx.statusChanged();
      return exit;
    });
    return { done: run.done };
  }

  /** The pod status: the machine state's phase and reason, with this pod's container statuses. */
  report(machine: PodStatusReport): PodStatusReport {
    const waiting = WAITING[machine.reason ?? ''];
    const status = (init: boolean, name: string): ContainerStatusReport => {
      const r = this.runs.get(key(init, name))!;
      let state = r.state;
      if (!r.ran && waiting) state = { waiting: { reason: waiting, message: machine.message } };
      else if (r.ran && machine.reason === 'CrashLoopBackOff' && 'terminated' in state)
        state = { waiting: { reason: 'CrashLoopBackOff', message: machine.message } };
      return { name, state, ready: init ? false : 'running' in state, restartCount: r.restartCount, containerID: r.containerID };
    };
    const init = this.specs(true).map((c) => status(true, c.name));
    return { ...machine, initContainers: init.length ? init : undefined, containers: this.specs(false).map((c) => status(false, c.name)) };
  }
}

const key = (init: boolean, name: string) => `${init ? 'init' : 'app'}/${name}`;

/**
 * One run of a preview1 module on its thread (module-host.ts): bounds its
 * start, turns the worker's messages (worker-protocol.ts) into the
 * container's start and exit, and stops it.
 *
 *   start() ──post 'run'──► starting ──'started'──► running ──'exit'/'trap'──► exited
 *                              │                      │
 *                              │'failed'/error        │ stop(): control[0]=1, notify
 *                              │start timeout/abort   │
 *                              │ (terminate())        │
 *                              ▼                      ▼
 *                          (rejects)               stopping ──unwinds at next WASI call──► exited (137)
 *                                                     │ still running after STOP_UNWIND_MS
 *                                                     ▼ terminate()  ─────────────────────► exited (137)
 *
 * `exit` resolves once the module's thread is gone (or, on a shared thread, its
 * 'done'), with the first outcome the worker reported, or 137 if it was
 * terminated before reporting one. Once stopping, the worker reports no outcome
 * of its own (a module that returns or exits after the stop flag is set was
 * killed, as by SIGKILL): a stop always ends in 137 unless the module had
 * already ended before it.
 */
import { channel } from 'node:diagnostics_channel';
import type { TransferListItem } from 'node:worker_threads';
import {
  providerError,
  type ContainerExit,
  type ContainerLimits,
  type ContainerResizeOutcome,
  type ContainerSpec,
  type EventRecorder,
  type Logger,
} from '@nodelet/plugin-api/v1';
import type { ModuleHost } from './module-host.ts';
import type { StdinPipe } from './stdin-pipe.ts';
import { codeExit, KILLED_EXIT_CODE, trapExit, type WasiContainer } from './wasi-container.ts';
import type { ModuleMessage, RunMessage } from './worker-protocol.ts';
import { RESIZE_LIMIT, RESIZE_SEQ, wake } from './worker/memory-limit.mjs';

/**
 * How long a stopped module gets to unwind by itself before its worker is
 * terminated. Unwinding closes its WASI descriptors; termination leaks them
 * (uvwasi does not close them), so only modules stuck in pure computation are
 * terminated.
 */
export const STOP_UNWIND_MS = 250;

/**
 * Diagnostics channel (`node:diagnostics_channel`) on which every container
 * start is published once its module runs, as a {@link ContainerStartEvent}.
 * Nothing is built when nobody subscribes.
 */
export const CONTAINER_START_CHANNEL = 'nodelet:wasi:container-start';

/** Published on {@link CONTAINER_START_CHANNEL}. */
export interface ContainerStartEvent {
  readonly containerId: string;
  readonly logPath: string;
  /** The worker thread's id (one per container). */
  readonly threadId: number;
  /** Waiting for a worker (0 when an idle one was taken). */
  readonly waitMs: number;
  /** From asking for a worker to the module about to run (cached module: no compile). */
  readonly startMs: number;
}

/** Channel on which every container end is published, as a {@link ContainerEndEvent}. */
export const CONTAINER_END_CHANNEL = 'nodelet:wasi:container-end';

/** Published on {@link CONTAINER_END_CHANNEL} once the container's worker thread is gone. */
export interface ContainerEndEvent {
  readonly containerId: string;
  readonly logPath: string;
  /** From the module's start to the thread's end (undefined if it never started). */
  readonly runMs?: number;
  readonly exit: ContainerExit;
}

const startChannel = channel(CONTAINER_START_CHANNEL);
const endChannel = channel(CONTAINER_END_CHANNEL);

/** What a run is made of. */
export interface ModuleRunParts {
  readonly spec: ContainerSpec;
  readonly host: ModuleHost;
  /** The run message's control buffer (stop flag, memory size). */
  readonly control: SharedArrayBuffer;
  readonly stdin?: StdinPipe;
  readonly log: Logger;
  readonly events?: EventRecorder;
  /** The memory cap (bytes) the module starts with: a trap near it is an OOM kill. */
  readonly capBytes: number | undefined;
  /**
   * Why the module's memory limit cannot change while it runs (its `memory.grow` was not
   * rewritten, grow-limit.ts); undefined when it can ({@link WasiContainer.resize}).
   */
  readonly notResizable: string | undefined;
  readonly startTimeoutMs: number;
  /** When the runner asked for a thread (performance.now()), and how long it waited for one. */
  readonly t0: number;
  readonly waitMs: number;
  /** Called once a dedicated thread was used up (started or gone): the pool boots its replacement. */
  readonly replaceThread: () => void;
}

/** One module's run; {@link ModuleRun.start} posts its run message. */
export class ModuleRun {
  private outcome: Omit<ContainerExit, 'finishedAt'> | undefined;
  private stopping = false;
  private instantiating = false;
  private startedAt: Date | undefined;
  private startedMs: number | undefined;
  private tid: number | undefined;
  private readonly exit: Promise<ContainerExit>;
  private resolveExit!: (e: ContainerExit) => void;
  private resolveStart!: (c: WasiContainer) => void;
  private rejectStart!: (e: Error) => void;
  private startTimer: NodeJS.Timeout | undefined;
  private signal: AbortSignal | undefined;
  private readonly onAbort = () =>
    this.abortStart(
      providerError('Unavailable', `container ${this.p.spec.name} was not started: the pod is being deleted (its module was still instantiating)`),
      false,
    );
  private readonly container: WasiContainer;
  /** The memory cap now (bytes; a resize changes it): a trap near it is an OOM kill. */
  private capBytes: number | undefined;
  /** The memory-limit requests waiting for the worker's answer, by sequence number. */
  private readonly resizing = new Map<number, { bytes: number | undefined; done: (o: ContainerResizeOutcome) => void; failed: (e: Error) => void }>();
  private resizeSeq = 0;

  constructor(private readonly p: ModuleRunParts) {
    this.capBytes = p.capBytes;
    this.exit = new Promise<ContainerExit>((r) => {
      this.resolveExit = r;
    });
    const startedAt = () => this.startedAt ?? new Date();
    this.container = {
      id: p.spec.id,
      stats: () => p.host.stats(this.tid, p.control),
      get startedAt() {
        return startedAt();
      },
      exit: this.exit,
      stdin: p.stdin,
      stop: () => this.stop(),
      resize: (limits) => this.resize(limits),
    };
  }

  /**
   * Asks the worker for memory limit `limits.memoryBytes` (none when absent): it applies it at
   * the module's next WASI call, or at once when the module sleeps (worker/memory-limit.mjs).
   * Resolves with the worker's answer; rejects `NotSupported` for a module whose limit cannot
   * change, `NotFound` once the container ended. The CPU limit has nothing to apply it to
   * (README.md, *CPU limit*): only the memory limit is sent.
   */
  private resize(limits: ContainerLimits): Promise<ContainerResizeOutcome> {
    const { spec, notResizable } = this.p;
    if (notResizable !== undefined) return Promise.reject(providerError('NotSupported', `container ${spec.name} cannot be resized in place: ${notResizable}`));
    if (this.stopping || this.startedAt === undefined) return Promise.reject(providerError('NotFound', `container ${spec.name} is not running`));
    const seq = ++this.resizeSeq;
    const bytes = limits.memoryBytes;
    const outcome = new Promise<ContainerResizeOutcome>((done, failed) => this.resizing.set(seq, { bytes, done, failed }));
    new Float64Array(this.p.control)[RESIZE_LIMIT] = bytes ?? Infinity;
    const flag = new Int32Array(this.p.control);
    Atomics.store(flag, RESIZE_SEQ, seq);
    wake(flag); // a sleeping module wakes, applies it and sleeps on
    return outcome;
  }

  /** The worker's answer to request `seq` (and to any older one still waiting: the newer request replaced it). */
  private resized(m: Extract<ModuleMessage, { type: 'resized' }>): void {
    for (const [seq, r] of this.resizing) {
      if (seq > m.seq) continue;
      this.resizing.delete(seq);
      if (m.outcome === 'unsupported') {
        r.failed(
          providerError(
            'NotSupported',
            `container ${this.p.spec.name} cannot be resized in place: its module's memory.grow is not bounded by a changeable limit`,
          ),
        );
        continue;
      }
      const applied = m.outcome === 'applied';
      if (applied && seq === m.seq) this.capBytes = r.bytes;
      r.done(applied ? { applied } : { applied, memoryUsageBytes: m.memoryBytes });
    }
  }

  /**
   * Posts the run message (moving `transfer` with it). Resolves once the module is instantiated and about to
   * run; rejects (branded error) if it could not be instantiated, did not
   * instantiate within the start timeout, or `signal` was aborted first.
   */
  start(input: RunMessage, signal?: AbortSignal, transfer: readonly TransferListItem[] = []): Promise<WasiContainer> {
    const started = new Promise<WasiContainer>((resolve, reject) => {
      this.resolveStart = resolve;
      this.rejectStart = reject;
    });
    // Bounding the start: a module looping in its start function never answers.
    this.startTimer = setTimeout(() => this.abortStart(this.startTimeoutError()), this.p.startTimeoutMs);
    this.signal = signal;
    signal?.addEventListener('abort', this.onAbort, { once: true });
    if (signal?.aborted) this.onAbort();
    this.p.host.onMessage((m) => this.onMessage(m));
    this.p.host.onError((e) => this.onError(e));
    this.p.host.onGone((code, why) => this.onGone(code, why));
    this.p.host.post(input, transfer);
    return started;
  }

  /**
   * WASI has no signals, so there is nothing polite to ask the module and the grace
   * period is not used. The flag makes the module unwind at its next WASI call (or
   * wake from its sleep) and close its descriptors; a module computing without
   * calling WASI is terminated after {@link STOP_UNWIND_MS}.
   */
  private async stop(): Promise<void> {
    if (!this.stopping) {
      this.stopping = true;
      // The flag first, then stdin: a module blocked reading stdin wakes on end of input
      // only after the stop is visible to its thread, so it cannot take that end of input
      // for a normal one and exit 0 by itself — the kill wins, as SIGKILL does (137).
      this.raiseStopFlag();
      this.p.stdin?.close(); // a module blocked reading stdin reads end of input
      this.terminateAfter(STOP_UNWIND_MS, `did not stop within ${STOP_UNWIND_MS} ms (busy without WASI calls)`);
    }
    await this.exit;
  }

  private onMessage(m: ModuleMessage): void {
    const { spec } = this.p;
    switch (m.type) {
      case 'instantiating':
        this.instantiating = true;
        break;
      case 'started':
        this.endStartBound();
        if (this.stopping) break; // given up on already: the worker is being terminated
        this.tid = m.tid;
        this.startedAt = new Date();
        this.startedMs = performance.now();
        this.resolveStart(this.container);
        if (!this.p.host.shared) setImmediate(this.p.replaceThread); // once the caller has its container
        if (startChannel.hasSubscribers) {
          startChannel.publish({
            containerId: spec.id,
            logPath: spec.logPath,
            threadId: this.p.host.threadId,
            waitMs: this.p.waitMs,
            startMs: this.startedMs - this.p.t0,
          } satisfies ContainerStartEvent);
        }
        break;
      case 'ready':
        break;
      case 'failed':
        this.endStartBound();
        this.rejectStart(
          m.reason === 'mount' || m.reason === 'port'
            ? providerError('InvalidArgument', `container ${spec.name}: ${m.message}`, m.reason === 'port' ? { reason: 'CannotListen' } : {})
            : providerError('InvalidImage', `cannot instantiate the module of image ${spec.image.image}: ${m.message}`),
        );
        break;
      case 'warning':
        this.p.log.warn({ container: spec.name }, m.message);
        if (m.reason !== undefined) this.p.events?.('Warning', m.reason, `container ${spec.name}: ${m.message}`);
        break;
      case 'exit':
        this.outcome ??= codeExit(m.code);
        break;
      case 'trap':
        this.outcome ??= trapExit(m.message, m.memoryBytes, this.capBytes);
        break;
      case 'resized':
        this.resized(m);
        break;
    }
  }

  private onError(e: Error): void {
    if (this.startedAt === undefined) {
      this.endStartBound();
      this.rejectStart(providerError('Internal', `the worker of container ${this.p.spec.name} failed to start: ${e.message}`, { cause: e }));
    } else {
      this.outcome ??= { exitCode: 1, reason: 'Error', message: `${e.name}: ${e.message}` };
    }
  }

  private onGone(code: number, why: string | undefined): void {
    const { spec } = this.p;
    this.endStartBound();
    if (this.startedAt === undefined) {
      this.rejectStart(providerError('Internal', `the worker of container ${spec.name} exited before the module started (code ${code})`));
      if (!this.p.host.shared) setImmediate(this.p.replaceThread);
    }
    const result: ContainerExit = {
      ...(this.outcome ??
        (this.stopping
          ? { exitCode: KILLED_EXIT_CODE, reason: 'Error' }
          : why !== undefined
            ? { exitCode: KILLED_EXIT_CODE, reason: 'Error', message: why }
            : { exitCode: 1, reason: 'Error', message: `the worker thread ended unexpectedly (code ${code})` })),
      finishedAt: new Date(),
    };
    this.p.stdin?.close();
    for (const r of this.resizing.values()) r.failed(providerError('NotFound', `container ${spec.name} ended before its new memory limit took effect`));
    this.resizing.clear();
    this.resolveExit(result);
    if (endChannel.hasSubscribers) {
      const runMs = this.startedMs === undefined ? undefined : performance.now() - this.startedMs;
      endChannel.publish({ containerId: spec.id, logPath: spec.logPath, runMs, exit: result } satisfies ContainerEndEvent);
    }
  }

  /**
   * Gives up on a start. On a thread of its own the thread is terminated. On a shared thread its
   * neighbours go on: the stop flag is raised, so the thread skips the module when it gets to it
   * (a start timeout there means the thread was busy with other modules: modules with a start
   * function never share a thread), or the module unwinds at its first WASI call; when the pod is
   * being deleted, a module that never calls WASI is bounded like a start.
   */
  private abortStart(err: Error, stuck = true): void {
    if (this.startedAt !== undefined) return;
    this.stopping = true;
    this.endStartBound();
    this.rejectStart(err);
    if (this.p.host.shared && (!stuck || !this.instantiating)) {
      this.raiseStopFlag();
      if (!stuck) this.terminateAfter(this.p.startTimeoutMs, `was not started (its pod was deleted) and did not stop within ${this.p.startTimeoutMs / 1000}s`);
      return;
    }
    this.p.host.terminate(`${this.whose()} did not finish starting; the thread was terminated`);
  }

  private startTimeoutError(): Error {
    const { spec, host, startTimeoutMs } = this.p;
    const within = `within ${startTimeoutMs / 1000}s`;
    if (host.shared && !this.instantiating) {
      return providerError(
        'Unavailable',
        `the thread shared with other BestEffort pods did not get to start container ${spec.name} ${within} (its other modules kept it busy); the container was not started and will be tried again`,
        { reason: 'StartTimeout' },
      );
    }
    const onSharedThread = host.shared ? ` (on a thread shared with other BestEffort pods, which was terminated)` : '';
    return providerError(
      'InvalidImage',
      this.instantiating
        ? `the module of image ${spec.image.image} did not finish instantiating ${within}: its start function (run before _start) does not return; its thread was terminated${onSharedThread}`
        : `the worker of container ${spec.name} did not start the module ${within}; its thread was terminated${onSharedThread}`,
      { reason: 'StartTimeout' },
    );
  }

  private endStartBound(): void {
    clearTimeout(this.startTimer);
    this.signal?.removeEventListener('abort', this.onAbort);
  }

  private raiseStopFlag(): void {
    const flag = new Int32Array(this.p.control);
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
    wake(flag);
  }

  /** Terminates the thread if the module has not ended within `ms` (the reason names the container). */
  private terminateAfter(ms: number, what: string): void {
    const timer = setTimeout(() => this.p.host.terminate(`${this.whose()} ${what}; the thread was terminated`), ms);
    void this.exit.then(() => clearTimeout(timer));
  }

  /** The container, as named in a shared thread's reason for its neighbours' exits. */
  private whose(): string {
    const { spec } = this.p;
    return `container ${spec.name} of pod ${spec.pod.namespace}/${spec.pod.name} on the same shared thread`;
  }
}

/**
 * Converges the actual state to the desired state every period (upstream
 * `reconciler/reconciler.go`): first unregister plugins whose socket vanished
 * or was re-created (timestamp changed), then register sockets that are not
 * registered for their current timestamp. At most one operation runs per
 * socket; a busy or backing-off socket is simply skipped this round.
 */
import type { ActualStateOfWorld, RegisteredPlugin } from './actual-state.ts';
import type { DesiredStateOfWorld } from './desired-state.ts';
import type { OperationMap } from './operation-map.ts';
import type { Logger } from '@nodelet/plugin-api/v1';

/** Upstream `loopSleepDuration`. */
const RECONCILE_PERIOD_MS = 1_000;

/** What the reconciler works with; the operations are injected so they can be faked. */
export interface ReconcilerDeps {
  readonly desired: DesiredStateOfWorld;
  readonly actual: ActualStateOfWorld;
  readonly operations: OperationMap;
  readonly register: (socketPath: string, timestamp: number) => Promise<void>;
  readonly unregister: (plugin: RegisteredPlugin) => Promise<void>;
  readonly log: Logger;
  readonly periodMs?: number;
}

/** Periodically diffs desired against actual state and starts operations. */
export class Reconciler {
  private readonly d: ReconcilerDeps;
  private timer: NodeJS.Timeout | undefined;

  constructor(deps: ReconcilerDeps) {
    this.d = deps;
  }

  /** One pass: unregister first, then register. */
  reconcileOnce(): void {
    const { desired, actual } = this.d;
    for (const plugin of actual.plugins()) {
      const wanted = desired.timestampOf(plugin.socketPath);
      if (wanted === undefined || wanted !== plugin.timestamp) {
        this._start('UnregisterPlugin', plugin.socketPath, () => this.d.unregister(plugin));
      }
    }
    for (const { socketPath, timestamp } of desired.plugins()) {
      if (!actual.existsWithTimestamp(socketPath, timestamp)) {
        this._start('RegisterPlugin', socketPath, () => this.d.register(socketPath, timestamp));
      }
    }
  }

  /** Runs a pass now and then every period. */
  start(): void {
    if (this.timer) return;
    this.reconcileOnce();
    this.timer = setInterval(() => this.reconcileOnce(), this.d.periodMs ?? RECONCILE_PERIOD_MS);
  }

  /** Stops the loop and waits for running operations. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.d.operations.idle();
  }

  private _start(what: string, socketPath: string, op: () => Promise<void>): void {
    const r = this.d.operations.run(socketPath, op);
    if (r.started) this.d.log.debug({ socketPath }, `OperationExecutor.${what} started`);
  }
}

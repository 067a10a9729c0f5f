/**
 * Graceful node shutdown, as upstream's `nodeshutdown_manager_linux.go`: when the
 * node (not just nodelet) is going down, the node turns `Ready=False` with
 * upstream's message `node is shutting down`, new pods are rejected
 * (`NodeShutdown`), regular pods are stopped within `shutdownGracePeriod −
 * shutdownGracePeriodCriticalPods`, then critical pods within the critical
 * budget; each ends `Failed` with reason `Terminated`, message `Pod was
 * terminated in response to imminent node shutdown.` and the condition
 * `DisruptionTarget` (reason `TerminationByKubelet`).
 *
 * The trigger: upstream listens for systemd-logind's `PrepareForShutdown` D-Bus
 * signal under a delay inhibitor lock (and, in recent releases, SIGUSR1). nodelet
 * has no D-Bus client yet (future work, docs/install.md), and Node.js reserves
 * SIGUSR1 for its inspector, so the documented trigger is **SIGPWR** to the
 * nodelet process (a systemd unit `ExecStop=` before shutdown, or a UPS daemon,
 * sends it). A SIGTERM is not a node shutdown: it stops nodelet only.
 *
 *   running ──(SIGPWR)──► shutting down ──► post Ready=False (≤ 1 s wait) ──► event NodeShutdown
 *      │                     │ admission rejects new pods (NodeShutdown)
 *      │                     ▼
 *      │                 regular pods: stop, Failed/Terminated  (≤ grace − critical)
 *      │                     ▼
 *      │                 critical pods: stop, Failed/Terminated (≤ critical)
 *      │                     ▼
 *      └─ disabled ──    done: stays NotReady until the process exits (SIGTERM)
 *         (grace 0: no handler, the signal's default applies)
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import type { Events } from '../events/index.ts';
import type { AbnormalTermination, AdmitResult, PodAdmitHandler } from '../pods/index.ts';
import { groupPods, podShutdownGraceMs, shutdownGroups, type ShutdownGroup } from './shutdown-groups.ts';

/** Upstream's pod status reason and message for a pod stopped by node shutdown. */
const NODE_SHUTDOWN_REASON = 'Terminated';
/** Upstream's pod status message (also the DisruptionTarget condition's). */
const NODE_SHUTDOWN_MESSAGE = 'Pod was terminated in response to imminent node shutdown.';
/** Upstream's Ready=False message while the node shuts down (`ShutdownStatus()`). */
const NODE_SHUTTING_DOWN = 'node is shutting down';
const NOT_ADMITTED: AdmitResult = { admit: false, reason: 'NodeShutdown', message: 'Pod was rejected as the node is shutting down.' };

/** Where the trigger signal comes from (`process`, or a test's emitter). */
export interface SignalSource {
  on(signal: 'SIGPWR', listener: () => void): unknown;
  off(signal: 'SIGPWR', listener: () => void): unknown;
}

/** Dependencies of the node shutdown manager. */
export interface NodeShutdownOptions {
  nodeName: string;
  /** `shutdownGracePeriod`; 0 disables graceful shutdown. */
  gracePeriodMs: number;
  /** `shutdownGracePeriodCriticalPods`, part of `gracePeriodMs`. */
  criticalPodsMs: number;
  log: Logger;
  events: Events;
  /** Pods admitted and not finished. */
  activePods(): V1Pod[];
  /** Stops a pod for good (`PodController.terminateAbnormally`); never rejects. */
  terminate(pod: V1Pod, t: AbnormalTermination): Promise<void>;
  /** Default: `process`. */
  signals?: SignalSource;
}

/** The longest the manager waits for the NotReady post before it stops pods. */
const STATUS_WAIT_MS = 1000;

/** Watches for a node shutdown and stops the pods in priority order within their budgets. */
export class NodeShutdownManager {
  private readonly groups: ShutdownGroup[];
  private state: 'running' | 'shutting-down' | 'done' = 'running';
  private running?: Promise<void>;
  private readonly onSignal = () => void this.shutdown('SIGPWR');
  private readonly statusPosters: (() => Promise<void>)[] = [];

  constructor(private readonly o: NodeShutdownOptions) {
    this.groups = shutdownGroups(o.gracePeriodMs, o.criticalPodsMs);
  }

  /**
   * Adds what posts the node's status (it reads {@link NodeShutdownManager.notReadyReasons}):
   * the node controller, built after this manager, in cluster mode. A shutdown awaits the
   * posts, at most {@link STATUS_WAIT_MS}, before it stops any pod.
   */
  onShutdownStarting(postNodeStatus: () => Promise<void>): void {
    this.statusPosters.push(postNodeStatus);
  }

  /** True when a grace period is configured. */
  get enabled(): boolean {
    return this.groups.length > 0;
  }

  /** Listens for the trigger (when enabled). */
  start(): void {
    if (!this.enabled) {
      this.o.log.info('no graceful node shutdown configured (--shutdown-grace-period=0s), node shutdown will be immediate');
      return;
    }
    (this.o.signals ?? process).on('SIGPWR', this.onSignal);
    this.o.log.info(
      { shutdownGracePeriodMs: this.o.gracePeriodMs, shutdownGracePeriodCriticalPodsMs: this.o.criticalPodsMs },
      'graceful node shutdown enabled: send SIGPWR to nodelet when the node shuts down',
    );
  }

  /** Stops listening. */
  stop(): void {
    (this.o.signals ?? process).off('SIGPWR', this.onSignal);
  }

  /** Reasons for Ready=False: `node is shutting down` once a shutdown began. */
  notReadyReasons(): string[] {
    return this.state === 'running' ? [] : [NODE_SHUTTING_DOWN];
  }

  /** Rejects new pods while the node shuts down (upstream's `Admit`). */
  admitHandler(): PodAdmitHandler {
    return { name: 'nodeshutdown', admit: () => (this.state === 'running' ? { admit: true } : NOT_ADMITTED) };
  }

  /** Runs the shutdown (once; later calls wait for the first); resolves when every band is done or out of time. */
  shutdown(source: string): Promise<void> {
    if (!this.enabled) return Promise.resolve();
    this.running ??= this.run(source);
    return this.running;
  }

  private async run(source: string): Promise<void> {
    this.state = 'shutting-down';
    this.o.log.info({ source }, 'shutdown manager detected shutdown event');
    this.o.events.emit(
      { kind: 'Node', namespace: 'default', name: this.o.nodeName, uid: this.o.nodeName },
      'Normal',
      'NodeShutdown',
      'Shutdown manager detected shutdown event',
    );
    // Upstream posts the status concurrently; waiting (briefly) makes NotReady visible before any pod stops.
    if (this.statusPosters.length) {
      const posted = Promise.all(this.statusPosters.map((post) => post())).catch((e) =>
        this.o.log.warn({ err: String(e) }, 'could not post NotReady before stopping pods'),
      );
      await within(posted, STATUS_WAIT_MS);
    }
    for (const g of groupPods(this.groups, this.o.activePods())) {
      if (!g.pods.length) continue;
      this.o.log.info({ priority: g.priority, graceMs: g.graceMs, pods: g.pods.length }, 'shutdown manager stopping pods');
      const all = Promise.all(
        g.pods.map((pod) =>
          this.o.terminate(pod, {
            graceMs: podShutdownGraceMs(pod, g.graceMs),
            reason: NODE_SHUTDOWN_REASON,
            message: NODE_SHUTDOWN_MESSAGE,
            conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message: NODE_SHUTDOWN_MESSAGE }],
          }),
        ),
      );
      if (!(await within(all, g.graceMs))) this.o.log.warn({ priority: g.priority, graceMs: g.graceMs }, 'shutdown manager pod killing time out');
    }
    this.state = 'done';
    this.o.log.info('shutdown manager completed processing shutdown event, node will shutdown shortly');
  }
}

/** Waits for `p` at most `ms`; true when it settled in time. */
async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((r) => (timer = setTimeout(() => r(false), ms)));
  try {
    return await Promise.race([p.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

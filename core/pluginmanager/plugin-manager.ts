/**
 * The plugin manager (upstream `pkg/kubelet/pluginmanager`): plugins announce
 * themselves by creating a unix socket serving pluginregistration v1 in the
 * plugins registry directory; the manager hands them to the handler for their
 * type. Shape: watcher → desired state; reconciler → operations → actual state.
 *
 * Life of one socket path:
 *
 *     socket created (watcher: desired[path] = mtime)
 *            │
 *            ▼
 *     ┌─► UNREGISTERED ◄─────────────────────────────────────────────┐
 *     │        │ reconcile: desired has path, actual lacks it         │
 *     │        │            (or has it for another timestamp)         │
 *     │        ▼                                                      │
 *     │   REGISTERING  dial 10 s → GetInfo 1 s → handler by type      │
 *     │        │       → validatePlugin → actual.add → registerPlugin │
 *     │        │       → NotifyRegistrationStatus(true) 5 s           │
 *     │        ├── any failure: NotifyRegistrationStatus(false,       │
 *     │        │   reason); not in actual ──► BACKOFF ────────────────┘
 *     │        │                         (500 ms, ×2, ≤ 2 min 2 s; then retried)
 *     │        ▼ ok
 *     │   REGISTERED   actual[path] = {timestamp, type, name, endpoint}
 *     │        │ socket deleted (desired lacks path) or
 *     │        │ re-created (desired timestamp ≠ actual timestamp)
 *     │        ▼
 *     └── DEREGISTERING  actual.remove → handler.deRegisterPlugin
 *                        (a re-created socket is registered on the next pass)
 *
 * One operation per socket at a time; "already in flight" just waits for the
 * next pass. Stopping the manager does not deregister anything (as upstream).
 */
import { resolve } from 'node:path';
import { ActualStateOfWorld, type RegisteredPlugin } from './actual-state.ts';
import { DesiredStateOfWorld } from './desired-state.ts';
import { OperationMap } from './operation-map.ts';
import type { Logger } from '@nodelet/plugin-api/v1';
import type { PluginHandler } from './plugin-handler.ts';
import { PluginWatcher } from './plugin-watcher.ts';
import { Reconciler } from './reconciler.ts';
import { registerPlugin, unregisterPlugin } from './registration.ts';

/** Options for {@link PluginManager}. */
export interface PluginManagerOptions {
  /** The plugins registry directory, e.g. /var/lib/kubelet/plugins_registry. */
  readonly dir: string;
  readonly log: Logger;
  /** Reconcile period; default 1 s like upstream. */
  readonly resyncPeriodMs?: number;
}

/** Registers plugins that appear as sockets in a directory with the handler for their type. */
export class PluginManager {
  private readonly handlers = new Map<string, PluginHandler>();
  private readonly desired = new DesiredStateOfWorld();
  private readonly actual = new ActualStateOfWorld();
  private readonly watcher: PluginWatcher;
  private readonly reconciler: Reconciler;
  private readonly log: Logger;
  private started = false;
  private abort = new AbortController();

  constructor(options: PluginManagerOptions) {
    const dir = resolve(options.dir);
    this.log = options.log;
    this.watcher = new PluginWatcher(dir, this.desired, options.log);
    const operations = new OperationMap({
      onError: (socketPath, err, backoffMs) => this.log.error({ socketPath, err, retryInMs: backoffMs }, `operation for "${socketPath}" failed`),
    });
    this.reconciler = new Reconciler({
      desired: this.desired,
      actual: this.actual,
      operations,
      log: options.log,
      periodMs: options.resyncPeriodMs,
      register: (socketPath, timestamp) =>
        registerPlugin({ socketPath, timestamp, handlers: new Map(this.handlers), actual: this.actual, log: this.log, signal: this.abort.signal }),
      unregister: (plugin) => unregisterPlugin(plugin, this.actual, this.log),
    });
  }

  /** Sets the handler for a plugin type ('CSIPlugin', 'DevicePlugin'); may be called before or after start. */
  addHandler(type: string, handler: PluginHandler): void {
    this.handlers.set(type, handler);
  }

  /** Creates/walks the directory, then starts watching and reconciling. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.abort = new AbortController();
    await this.watcher.start();
    this.reconciler.start();
    this.log.info('Starting Kubelet Plugin Manager');
  }

  /** Stops watching and reconciling; cancels dials in progress and waits for other operations in flight. */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    this.abort.abort();
    await this.watcher.stop();
    await this.reconciler.stop();
    this.log.info('Shutting down Kubelet Plugin Manager');
  }

  /** The plugins registered now. */
  registeredPlugins(): RegisteredPlugin[] {
    return this.actual.plugins();
  }
}

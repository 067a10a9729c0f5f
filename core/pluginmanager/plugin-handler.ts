/**
 * What a plugin type (CSI drivers, device plugins) provides to the plugin
 * manager. Mirrors upstream `pkg/kubelet/pluginmanager/cache.PluginHandler`.
 *
 * The manager itself (`PluginManager`) lives in plugin-manager.ts and is
 * re-exported here; its doc comment carries the socket state machine.
 */

/**
 * Handles plugins of one `PluginInfo.type`. Each method may be sync or async.
 * Throwing from `validatePlugin` or `registerPlugin` rejects the plugin: the
 * plugin is told why with `NotifyRegistrationStatus(false, reason)` and the
 * registration is retried with back-off while its socket exists.
 */
export interface PluginHandler {
  /** Checks name, endpoint and versions before anything is registered. */
  validatePlugin(name: string, endpoint: string, versions: readonly string[]): void | Promise<void>;
  /**
   * Starts using the plugin. `endpoint` is the socket to talk to (the
   * registration socket when the plugin left it empty). `pluginClientTimeoutMs`
   * is undefined when the handler should use its own default (upstream passes nil).
   */
  registerPlugin(name: string, endpoint: string, versions: readonly string[], pluginClientTimeoutMs?: number): void | Promise<void>;
  /** Stops using the plugin: its socket vanished or was re-created. Errors are logged, never retried. */
  deRegisterPlugin(name: string, endpoint: string): void | Promise<void>;
}

export { PluginManager, type PluginManagerOptions } from './plugin-manager.ts';

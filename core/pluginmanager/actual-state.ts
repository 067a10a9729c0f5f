/**
 * The actual state of world: plugins that passed validation and are (being)
 * registered with their handler. Only registration/deregistration operations
 * write here (upstream `cache/actual_state_of_world.go`).
 */
import type { PluginHandler } from './plugin-handler.ts';
import { nodeletError } from '../errors/index.ts';
import { registeredPlugins } from '../metrics/index.ts';

/** A registered plugin, keyed by its registration socket. */
export interface RegisteredPlugin {
  /** The registration socket in the plugins directory. */
  readonly socketPath: string;
  /** The desired-state timestamp this registration was made for. */
  readonly timestamp: number;
  /** `PluginInfo.type`, e.g. `CSIPlugin`. */
  readonly type: string;
  readonly handler: PluginHandler;
  /** `PluginInfo.name`. */
  readonly name: string;
  /** `PluginInfo.endpoint`, or the socket path when the plugin left it empty. */
  readonly endpoint: string;
  readonly versions: readonly string[];
}

/** socket path → registered plugin. */
export class ActualStateOfWorld {
  private readonly _plugins = new Map<string, RegisteredPlugin>();

  /** Records a registration (replacing any older one for the same socket). */
  add(plugin: RegisteredPlugin): void {
    if (plugin.socketPath === '') throw nodeletError('NDL_PLUGIN_VALIDATION', 'socket path is empty');
    const old = this._plugins.get(plugin.socketPath);
    if (old) registeredPlugins.dec({ type: old.type });
    this._plugins.set(plugin.socketPath, plugin);
    registeredPlugins.inc({ type: plugin.type });
  }

  /** Forgets the socket's registration. */
  remove(socketPath: string): void {
    const old = this._plugins.get(socketPath);
    if (old) registeredPlugins.dec({ type: old.type });
    this._plugins.delete(socketPath);
  }

  /** The registration for a socket, if any. */
  get(socketPath: string): RegisteredPlugin | undefined {
    return this._plugins.get(socketPath);
  }

  /** True when the socket is registered for exactly this timestamp. */
  existsWithTimestamp(socketPath: string, timestamp: number): boolean {
    return this._plugins.get(socketPath)?.timestamp === timestamp;
  }

  /** A snapshot of every registration. */
  plugins(): RegisteredPlugin[] {
    return [...this._plugins.values()];
  }
}

/**
 * The desired state of world: every plugin socket the watcher has seen and not
 * yet seen vanish, with its timestamp (the socket's mtime). A new timestamp for
 * a known path means the socket was re-created and must be registered again.
 * Only the plugin watcher writes here (upstream `cache/desired_state_of_world.go`).
 */
import { nodeletError } from '../errors/index.ts';

/** One socket that should be registered. */
export interface DesiredPlugin {
  readonly socketPath: string;
  readonly timestamp: number;
}

/** socket path → timestamp. */
export class DesiredStateOfWorld {
  private readonly _plugins = new Map<string, number>();

  /** Adds a socket or updates its timestamp; true when something changed. */
  addOrUpdate(socketPath: string, timestamp: number): boolean {
    if (socketPath === '') throw nodeletError('NDL_PLUGIN_VALIDATION', 'socket path is empty');
    if (this._plugins.get(socketPath) === timestamp) return false;
    this._plugins.set(socketPath, timestamp);
    return true;
  }

  /** Forgets a socket; true when it was known. */
  remove(socketPath: string): boolean {
    return this._plugins.delete(socketPath);
  }

  /** True when the socket is wanted. */
  has(socketPath: string): boolean {
    return this._plugins.has(socketPath);
  }

  /** The socket's timestamp, if wanted. */
  timestampOf(socketPath: string): number | undefined {
    return this._plugins.get(socketPath);
  }

  /** A snapshot of every wanted socket. */
  plugins(): DesiredPlugin[] {
    return [...this._plugins].map(([socketPath, timestamp]) => ({ socketPath, timestamp }));
  }
}

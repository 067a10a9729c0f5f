/**
 * Watches the plugins registry directory (upstream `pluginwatcher`): creates it
 * if missing (0750), reports the sockets already there, then follows changes.
 * Names starting with '.' and anything that is not a unix socket (lstat) are
 * ignored. The watcher only edits the desired state; the reconciler acts.
 */
import { lstat, mkdir } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import chokidar, { type FSWatcher } from 'chokidar';
import type { DesiredStateOfWorld } from './desired-state.ts';
import type { Logger } from '@nodelet/plugin-api/v1';

/** Mode of the plugins directory when the watcher has to create it. */
const PLUGIN_DIR_MODE = 0o750;

/** Feeds the desired state from a directory of plugin sockets. */
export class PluginWatcher {
  private readonly dir: string;
  private readonly desired: DesiredStateOfWorld;
  private readonly log: Logger;
  private watcher: FSWatcher | undefined;
  /** Events are handled one at a time, in order, so a late lstat never undoes a later unlink. */
  private queue: Promise<void> = Promise.resolve();

  constructor(dir: string, desired: DesiredStateOfWorld, log: Logger) {
    this.dir = resolve(dir);
    this.desired = desired;
    this.log = log;
  }

  /** Ensures the directory, walks what is there, and resolves once watching. */
  async start(): Promise<void> {
    if (this.watcher) return;
    await mkdir(this.dir, { recursive: true, mode: PLUGIN_DIR_MODE });
    const watcher = chokidar.watch(this.dir, {
      ignoreInitial: false,
      atomic: false, // report unlink + add, not a synthetic change
      followSymlinks: false,
      ignored: (path) => path !== this.dir && basename(path).startsWith('.'),
    });
    this.watcher = watcher;
    watcher.on('add', (path) => this.enqueue(() => this.created(path)));
    watcher.on('change', (path) => this.enqueue(() => this.created(path)));
    watcher.on('unlink', (path) => this.enqueue(() => this.removed(path)));
    watcher.on('error', (err) => this.log.error({ err, dir: this.dir }, 'plugin watcher error'));
    await new Promise<void>((ready) => watcher.once('ready', ready));
    await this.queue;
    this.log.info({ dir: this.dir }, 'plugin watcher started');
  }

  /** Stops watching; the desired state keeps its contents. */
  async stop(): Promise<void> {
    const watcher = this.watcher;
    this.watcher = undefined;
    await watcher?.close();
    await this.queue;
  }

  private enqueue(task: () => Promise<void>): void {
    this.queue = this.queue.then(task).catch((err) => this.log.error({ err }, 'plugin watcher event failed'));
  }

  private async created(path: string): Promise<void> {
    let stats;
    try {
      stats = await lstat(path);
    } catch (err) {
      this.log.debug({ path, err }, 'plugin watcher: entry vanished before lstat');
      return;
    }
    if (!stats.isSocket()) {
      this.log.debug({ path }, 'Ignoring non socket file');
      // A socket replaced by something else is no longer a plugin.
      this.desired.remove(path);
      return;
    }
    if (this.desired.addOrUpdate(path, stats.mtimeMs)) {
      this.log.debug({ path }, 'Adding socket path or updating timestamp to desired state cache');
    }
  }

  private async removed(path: string): Promise<void> {
    if (this.desired.remove(path)) {
      this.log.debug({ path }, 'Removing socket path from desired state cache');
    }
  }
}

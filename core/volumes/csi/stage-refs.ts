/**
 * Who uses a staged volume on this node. A persistent volume is staged once
 * per node (NodeStageVolume into its global path) and published once per pod;
 * it is unstaged when its last publish target goes.
 *
 * Kept in memory; rebuilt at start from disk ({@link StageRefs.recover}):
 *   - every `<podsDir>/<uid>/volumes/kubernetes.io~csi/<name>/vol_data.json`
 *     of a Persistent volume is a user (its `mount` dir) of the staging path
 *     derived from driver + handle;
 *   - every `<pluginsDir>/kubernetes.io/csi/<driver>/<sha>/vol_data.json` is a
 *     staged volume (written before NodeStageVolume, removed after a
 *     successful NodeUnstageVolume). Staged volumes with no user are orphans,
 *     unstaged when their driver registers.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { escapePluginName } from '../plugin-registry.ts';
import { CSI_PLUGIN_NAME, publishTargetPath, stagingTargetPath } from './csi-paths.ts';
import { loadVolData } from './vol-data.ts';

/** A staged volume. */
export interface StagedVolume {
  readonly driver: string;
  readonly volumeHandle: string;
  readonly stagingPath: string;
}

/** Staging path → publish targets, and the staged volumes. */
export class StageRefs {
  private readonly _users = new Map<string, Set<string>>();
  private readonly staged = new Map<string, StagedVolume>();

  /** Records that `target` uses the volume staged at `stagingPath`. */
  addUser(stagingPath: string, target: string): void {
    let s = this._users.get(stagingPath);
    if (!s) this._users.set(stagingPath, (s = new Set()));
    s.add(target);
  }

  /** Forgets a user; returns how many remain. */
  removeUser(stagingPath: string, target: string): number {
    const s = this._users.get(stagingPath);
    if (!s) return 0;
    s.delete(target);
    if (s.size === 0) this._users.delete(stagingPath);
    return s.size;
  }

  users(stagingPath: string): number {
    return this._users.get(stagingPath)?.size ?? 0;
  }

  markStaged(v: StagedVolume): void {
    this.staged.set(v.stagingPath, v);
  }

  markUnstaged(stagingPath: string): void {
    this.staged.delete(stagingPath);
  }

  isStaged(stagingPath: string): boolean {
    return this.staged.has(stagingPath);
  }

  /** Staged volumes of `driver` that no target uses. */
  orphans(driver: string): StagedVolume[] {
    return [...this.staged.values()].filter((v) => v.driver === driver && this.users(v.stagingPath) === 0);
  }

  /** Rebuilds the maps from the pod volume dirs and the global staging dirs (unreadable entries are skipped). */
  async recover(podsDir: string, pluginsDir: string, onError?: (where: string, err: unknown) => void): Promise<void> {
    const plugin = escapePluginName(CSI_PLUGIN_NAME);
    for (const uid of await list(podsDir)) {
      const root = path.join(podsDir, uid, 'volumes', plugin);
      for (const name of await list(root)) {
        const dir = path.join(root, name);
        try {
          const d = await loadVolData(dir);
          if (d?.volumeLifecycleMode === 'Persistent') {
            this.addUser(stagingTargetPath(pluginsDir, d.driverName, d.volumeHandle), publishTargetPath(dir));
          }
        } catch (e) {
          onError?.(dir, e);
        }
      }
    }
    const globalRoot = path.join(pluginsDir, CSI_PLUGIN_NAME);
    for (const driver of await list(globalRoot)) {
      for (const sha of await list(path.join(globalRoot, driver))) {
        const dir = path.join(globalRoot, driver, sha);
        try {
          const d = await loadVolData(dir);
          if (d)
            this.markStaged({ driver: d.driverName, volumeHandle: d.volumeHandle, stagingPath: stagingTargetPath(pluginsDir, d.driverName, d.volumeHandle) });
        } catch (e) {
          onError?.(dir, e);
        }
      }
    }
  }
}

async function list(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name);
  } catch {
    return [];
  }
}

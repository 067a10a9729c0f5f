/**
 * The node's volume plugins, like upstream's `cmd/kubelet/app/plugins.go`
 * `ProbeVolumePlugins`: one list, built here by the composition root and
 * passed to pod set-up (set-up and tear-down). Each root builds its own
 * registry; nothing is shared between nodelets in one process.
 *
 * To add a volume plugin: write it in `core/volumes/plugins/` and add one
 * entry to the list below (a plugin that needs running parts, like CSI, is
 * built by the root and passed in).
 */
import {
  configMapPlugin,
  downwardApiPlugin,
  emptyDirPlugin,
  hostPathPlugin,
  projectedPlugin,
  secretPlugin,
  tmpfsBacked,
  VolumePluginRegistry,
  memoryEmptyDirSize,
  type TmpfsMounter,
  type VolumePlugin,
} from '../volumes/index.ts';

/** Plugins built by the root from running parts. */
export interface ProbedVolumePlugins {
  /** The `kubernetes.io/csi` plugin (from `startCsi`). */
  readonly csi?: VolumePlugin;
  /** The `kubernetes.io/image` plugin (`imageVolumePlugin`, built on the node's image service). */
  readonly image?: VolumePlugin;
  /**
   * Mounts memory-backed volumes (`emptyDir` `medium: Memory`, `secret`, `projected`) as tmpfs,
   * as upstream does; without it they are plain directories.
   */
  readonly tmpfs?: TmpfsMounter;
}

/** The memory-backed plugins, wrapped with `tmpfs` when given. */
function memoryBacked(tmpfs: TmpfsMounter | undefined): { emptyDir: VolumePlugin; secret: VolumePlugin; projected: VolumePlugin } {
  if (!tmpfs) return { emptyDir: emptyDirPlugin, secret: secretPlugin, projected: projectedPlugin };
  const onDisk = (what: string) => `${what} is a plain directory on the node's disk: nodelet does not run as root (no tmpfs)`;
  return {
    emptyDir: tmpfsBacked(emptyDirPlugin, tmpfs, {
      wanted: (v) => v.emptyDir?.medium === 'Memory',
      mode: 0o777,
      size: memoryEmptyDirSize,
      onDiskNote: onDisk('emptyDir medium Memory'),
    }),
    secret: tmpfsBacked(secretPlugin, tmpfs, { wanted: () => true, mode: 0o755, size: () => undefined, onDiskNote: onDisk('the secret volume') }),
    projected: tmpfsBacked(projectedPlugin, tmpfs, { wanted: () => true, mode: 0o755, size: () => undefined, onDiskNote: onDisk('the projected volume') }),
  };
}

/** A new registry of every volume plugin of this node, in match order. */
export function probeVolumePlugins(running: ProbedVolumePlugins = {}): VolumePluginRegistry {
  const m = memoryBacked(running.tmpfs);
  return new VolumePluginRegistry([
    m.emptyDir,
    configMapPlugin,
    m.secret,
    downwardApiPlugin,
    m.projected,
    hostPathPlugin,
    ...(running.image ? [running.image] : []),
    ...(running.csi ? [running.csi] : []),
  ]);
}

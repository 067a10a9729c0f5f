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
  VolumePluginRegistry,
  type VolumePlugin,
} from '../volumes/index.ts';

/** Plugins built by the root from running parts. */
export interface ProbedVolumePlugins {
  /** The `kubernetes.io/csi` plugin (from `startCsi`). */
  readonly csi?: VolumePlugin;
}

/** A new registry of every volume plugin of this node, in match order. */
export function probeVolumePlugins(running: ProbedVolumePlugins = {}): VolumePluginRegistry {
  return new VolumePluginRegistry([
    emptyDirPlugin,
    configMapPlugin,
    secretPlugin,
    downwardApiPlugin,
    projectedPlugin,
    hostPathPlugin,
    ...(running.csi ? [running.csi] : []),
  ]);
}

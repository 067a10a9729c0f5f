/**
 * The volume plugin registry: finds the plugin for a `V1Volume` and maps the
 * on-disk plugin dirs (`kubernetes.io~empty-dir`) back to plugins.
 */
import path from 'node:path';
import type { V1Volume } from '@kubernetes/client-node';
import { nodeletError } from '../errors/index.ts';
import { validateName } from '../paths/index.ts';
import type { VolumePlugin } from './types.ts';

/** Upstream `EscapeQualifiedName`: `kubernetes.io/empty-dir` → `kubernetes.io~empty-dir`. */
export function escapePluginName(pluginName: string): string {
  return pluginName.replaceAll('/', '~');
}

/** `<podDir>/volumes/<escaped plugin>/<volume>` (the volume name is checked to be one component). */
export function volumeDirFor(podDir: string, pluginName: string, volumeName: string): string {
  validateName(volumeName, volumeName, 'volume name');
  return path.join(podDir, 'volumes', escapePluginName(pluginName), volumeName);
}

/** The source field set on a volume (`emptyDir`, `nfs`, ...), or undefined when none is. */
function volumeSourceType(volume: V1Volume): string | undefined {
  for (const [k, v] of Object.entries(volume)) if (k !== 'name' && v !== undefined && v !== null) return k;
  return undefined;
}

/** An ordered set of volume plugins. */
export class VolumePluginRegistry {
  private readonly plugins: VolumePlugin[] = [];

  constructor(plugins: Iterable<VolumePlugin> = []) {
    for (const p of plugins) this.register(p);
  }

  /** Adds a plugin; a second plugin with the same name is refused. */
  register(plugin: VolumePlugin): void {
    if (this.plugins.some((p) => p.pluginName === plugin.pluginName)) {
      throw nodeletError('NDL_VOLUME_PLUGIN_DUPLICATE', `volume plugin ${plugin.pluginName} is already registered`);
    }
    this.plugins.push(plugin);
  }

  /** The plugin for `volume`; throws `NDL_VOLUME_UNSUPPORTED` naming the source type. */
  find(volume: V1Volume): VolumePlugin {
    const found = this.plugins.find((p) => p.canSupport(volume));
    if (found) return found;
    const type = volumeSourceType(volume);
    throw nodeletError(
      'NDL_VOLUME_UNSUPPORTED',
      type === undefined
        ? `volume ${JSON.stringify(volume.name)} has no volume source`
        : `volume ${JSON.stringify(volume.name)}: type ${JSON.stringify(type)} is not supported on this node`,
    );
  }

  /** The plugin whose escaped name is `dirName`, if any. */
  byDirName(dirName: string): VolumePlugin | undefined {
    return this.plugins.find((p) => escapePluginName(p.pluginName) === dirName);
  }

  list(): readonly VolumePlugin[] {
    return [...this.plugins];
  }
}

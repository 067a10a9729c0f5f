/** The built-in volume plugins. */
import { VolumePluginRegistry } from '../plugin-registry.ts';
import { configMapPlugin } from './config-map.ts';
import { downwardApiPlugin } from './downward-api.ts';
import { emptyDirPlugin } from './empty-dir.ts';
import { hostPathPlugin } from './host-path.ts';
import { projectedPlugin } from './projected.ts';
import { secretPlugin } from './secret.ts';

export { configMapPlugin, downwardApiPlugin, emptyDirPlugin, hostPathPlugin, projectedPlugin, secretPlugin };

/** A new registry holding the built-in plugins; add more (CSI) with `register`. */
export function defaultVolumePlugins(): VolumePluginRegistry {
  return new VolumePluginRegistry([emptyDirPlugin, configMapPlugin, secretPlugin, downwardApiPlugin, projectedPlugin, hostPathPlugin]);
}

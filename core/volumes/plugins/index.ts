/** The built-in volume plugins; the composition root lists them (core/agent/volume-plugins.ts). */
import { configMapPlugin } from './config-map.ts';
import { downwardApiPlugin } from './downward-api.ts';
import { emptyDirPlugin } from './empty-dir.ts';
import { hostPathPlugin } from './host-path.ts';
import { projectedPlugin } from './projected.ts';
import { secretPlugin } from './secret.ts';

export { configMapPlugin, downwardApiPlugin, emptyDirPlugin, hostPathPlugin, projectedPlugin, secretPlugin };

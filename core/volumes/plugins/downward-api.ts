/** `downwardAPI` volumes (upstream plugin `kubernetes.io/downward-api`). */
import type { V1Volume } from '@kubernetes/client-node';
import type { VolumePlugin } from '../types.ts';
import { DEFAULT_MODE, downwardApiPayload } from './data-payload.ts';
import { setUpDataVolume } from './data-volume.ts';

const DOWNWARD_API_PLUGIN = 'kubernetes.io/downward-api';

/**
 * One file per item: metadata fields (labels/annotations as sorted
 * `key="value"` lines), and — beyond upstream's volume validation, which only
 * allows metadata — the runtime fields env vars support (spec.nodeName,
 * status.hostIP, ...); `resourceFieldRef` needs `containerName`.
 */
export const downwardApiPlugin: VolumePlugin = {
  pluginName: DOWNWARD_API_PLUGIN,
  waitsForDir: true,
  canSupport: (v: V1Volume) => v.downwardAPI != null,
  async setUp(volume, ctx) {
    const src = volume.downwardAPI!;
    const payload = downwardApiPayload(src.items, src.defaultMode ?? DEFAULT_MODE, ctx);
    return setUpDataVolume(volume, ctx, DOWNWARD_API_PLUGIN, 'downwardAPI', payload);
  },
};

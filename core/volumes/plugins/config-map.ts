/** `configMap` volumes (upstream plugin `kubernetes.io/configmap`). */
import type { V1Volume } from '@kubernetes/client-node';
import type { VolumePlugin } from '../types.ts';
import { configMapPayload, DEFAULT_MODE, fetchConfigMap } from './data-payload.ts';
import { setUpDataVolume } from './data-volume.ts';

const CONFIG_MAP_PLUGIN = 'kubernetes.io/configmap';

/** Writes the configMap's keys (or `items`) as files; missing + `optional` gives an empty volume. */
export const configMapPlugin: VolumePlugin = {
  pluginName: CONFIG_MAP_PLUGIN,
  waitsForDir: true,
  canSupport: (v: V1Volume) => v.configMap != null,
  async setUp(volume, ctx) {
    const src = volume.configMap!;
    const optional = src.optional === true;
    const cm = await fetchConfigMap(ctx, src.name ?? '', optional);
    const payload = configMapPayload(cm, src.items, src.defaultMode ?? DEFAULT_MODE, optional);
    return setUpDataVolume(volume, ctx, CONFIG_MAP_PLUGIN, 'configMap', payload);
  },
};

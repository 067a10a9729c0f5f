/** `secret` volumes (upstream plugin `kubernetes.io/secret`). */
import type { V1Volume } from '@kubernetes/client-node';
import type { VolumePlugin } from '../types.ts';
import { DEFAULT_MODE, fetchSecret, secretPayload } from './data-payload.ts';
import { setUpDataVolume } from './data-volume.ts';

const SECRET_PLUGIN = 'kubernetes.io/secret';

/**
 * Writes the secret's keys (or `items`) as files (base64-decoded); missing +
 * `optional` gives an empty volume. Upstream backs these with tmpfs, and so does
 * nodelet when it runs as root: the composition root wraps this plugin (`../tmpfs.ts`);
 * unwrapped, they are plain files under the pod dir (noted on the volume).
 */
export const secretPlugin: VolumePlugin = {
  pluginName: SECRET_PLUGIN,
  waitsForDir: true,
  canSupport: (v: V1Volume) => v.secret != null,
  async setUp(volume, ctx) {
    const src = volume.secret!;
    const optional = src.optional === true;
    const secret = await fetchSecret(ctx, src.secretName ?? '', optional);
    const payload = secretPayload(secret, src.items, src.defaultMode ?? DEFAULT_MODE, optional);
    return setUpDataVolume(volume, ctx, SECRET_PLUGIN, 'secret', payload, {
      notes: ['secret files are stored on disk under the pod directory (no tmpfs on this node)'],
    });
  },
};

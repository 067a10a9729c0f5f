/** `emptyDir` volumes (upstream plugin `kubernetes.io/empty-dir`). */
import { chmod, lstat, mkdir } from 'node:fs/promises';
import type { V1Volume } from '@kubernetes/client-node';
import { nodeletError } from '../../errors/index.ts';
import { volumeDirFor } from '../plugin-registry.ts';
import type { VolumePlugin } from '../types.ts';

const EMPTY_DIR_PLUGIN = 'kubernetes.io/empty-dir';

/**
 * A directory under the pod dir, mode 0777 like upstream. For `medium: Memory`
 * the composition root wraps this plugin so the dir is a tmpfs mount when nodelet
 * runs as root (`../tmpfs.ts`); unwrapped, it is a plain directory, recorded as a note. `sizeLimit` is
 * enforced by eviction (core/eviction), not by the filesystem, as upstream.
 */
export const emptyDirPlugin: VolumePlugin = {
  pluginName: EMPTY_DIR_PLUGIN,
  canSupport: (v: V1Volume) => v.emptyDir != null,
  async setUp(volume, ctx) {
    const src = volume.emptyDir!;
    const dir = volumeDirFor(ctx.podDir, EMPTY_DIR_PLUGIN, volume.name);
    await mkdir(dir, { recursive: true });
    const st = await lstat(dir);
    if (!st.isDirectory()) throw nodeletError('NDL_PATH_ESCAPE', `${volume.name}: volume dir is not a directory`);
    if ((st.mode & 0o7777) !== 0o777) await chmod(dir, 0o777);
    const notes: string[] = [];
    if (src.medium === 'Memory') notes.push('emptyDir medium Memory is a plain directory on this node (no tmpfs)');
    else if (src.medium) notes.push(`emptyDir medium ${JSON.stringify(src.medium)} is a plain directory on this node`);
    for (const note of notes) ctx.log.debug({ volume: volume.name }, note);
    return { name: volume.name, hostPath: dir, readOnly: false, kind: 'emptyDir', ...(notes.length ? { notes } : {}) };
  },
};

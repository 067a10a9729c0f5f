/**
 * The shared set-up of data volumes (configMap, secret, downwardAPI,
 * projected): write the payload into the plugin's volume dir, read-only,
 * once `ctx.dirReady` settled (their plugins set `waitsForDir`).
 */
import path from 'node:path';
import type { V1Volume } from '@kubernetes/client-node';
import { writePayload, type Payload } from '../payload-writer.ts';
import { volumeDirFor } from '../plugin-registry.ts';
import type { PreparedVolume, VolumeContext } from '../types.ts';

/** Where nodelet records the files it wrote for a volume: next to, not inside, the volume dir. */
function manifestPathFor(volumeDir: string): string {
  return path.join(path.dirname(volumeDir), `.${path.basename(volumeDir)}.nodelet-files`);
}

/** Writes `payload` to the volume's dir and describes the result. */
export async function setUpDataVolume(
  volume: V1Volume,
  ctx: VolumeContext,
  pluginName: string,
  kind: string,
  payload: Payload,
  extra: Pick<PreparedVolume, 'refreshAt' | 'notes'> = {},
): Promise<PreparedVolume> {
  const dir = volumeDirFor(ctx.podDir, pluginName, volume.name);
  await ctx.dirReady;
  const res = await writePayload(dir, volume.name, payload, manifestPathFor(dir), undefined, { inMemory: ctx.dirInMemory });
  if (res.written.length > 0 || res.removed.length > 0) {
    ctx.log.debug({ volume: volume.name, written: res.written.length, removed: res.removed.length }, 'volume files synced');
  }
  return { name: volume.name, hostPath: dir, readOnly: true, kind, ...extra };
}

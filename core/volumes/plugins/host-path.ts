/**
 * `hostPath` volumes (upstream plugin `kubernetes.io/host-path`). The path is
 * the user's host path, used as is (nothing under the pod dir; never removed
 * at teardown). Type checks follow upstream `checkTypeInternal`, following
 * symlinks like `os.Stat`.
 */
import { mkdir, open, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';
import type { V1Volume } from '@kubernetes/client-node';
import { nodeletError } from '../../errors/index.ts';
import type { VolumePlugin } from '../types.ts';

const HOST_PATH_PLUGIN = 'kubernetes.io/host-path';

const CHECKS: Record<string, [test: (s: Stats) => boolean, what: string]> = {
  Directory: [(s) => s.isDirectory(), 'a directory'],
  File: [(s) => s.isFile(), 'a file'],
  Socket: [(s) => s.isSocket(), 'a socket file'],
  CharDevice: [(s) => s.isCharacterDevice(), 'a character device'],
  BlockDevice: [(s) => s.isBlockDevice(), 'a block device'],
};

function failed(p: string, what: string) {
  return nodeletError('NDL_VOLUME_SOURCE', `hostPath type check failed: ${p} is not ${what}`);
}

/** Upstream `checkTypeInternal`; creates the dir (0755) or empty file (0644) for the `...OrCreate` types. */
async function checkHostPathType(p: string, type: string): Promise<void> {
  if (type === '') return;
  const st = await stat(p).catch(() => undefined);
  if (type === 'DirectoryOrCreate' || type === 'FileOrCreate') {
    if (st === undefined) {
      if (type === 'DirectoryOrCreate') await mkdir(p, { recursive: true, mode: 0o755 });
      else await (await open(p, 'a', 0o644)).close();
      return;
    }
    type = type === 'DirectoryOrCreate' ? 'Directory' : 'File';
  }
  const check = CHECKS[type];
  if (!check) throw nodeletError('NDL_POD_INVALID', `${type} is an invalid volume type`);
  if (st === undefined || !check[0](st)) throw failed(p, check[1]);
}

/** The host path, type-checked; read-only only if the volumeMount says so. */
export const hostPathPlugin: VolumePlugin = {
  pluginName: HOST_PATH_PLUGIN,
  canSupport: (v: V1Volume) => v.hostPath != null,
  async setUp(volume, ctx) {
    const p = volume.hostPath!.path;
    if (!path.isAbsolute(p))
      throw nodeletError('NDL_POD_INVALID', `volume ${JSON.stringify(volume.name)}: hostPath ${JSON.stringify(p)} must be an absolute path`);
    if (p.split('/').includes('..')) throw nodeletError('NDL_PATH_ESCAPE', `${volume.name}: path ${JSON.stringify(p)} must not contain '..'`);
    await checkHostPathType(p, volume.hostPath!.type ?? '');
    ctx.log.debug({ volume: volume.name, path: p }, 'hostPath volume uses a host directory as is');
    return {
      name: volume.name,
      hostPath: path.normalize(p),
      readOnly: false,
      kind: 'hostPath',
      notes: [`hostPath ${p} is the node's own path, shared with the host`],
    };
  },
};

/**
 * Memory-backed volumes, as upstream's kubelet mounts them: an `emptyDir` with
 * `medium: Memory`, and `secret` / `projected` volumes (so no secret or token
 * bytes reach the disk), each on its own tmpfs mounted on the volume dir.
 * {@link tmpfsBacked} wraps a volume plugin: set-up mounts the tmpfs first (once:
 * a mounted dir is left as is), tear-down unmounts it before the dir is removed.
 *
 * The size of a Memory emptyDir's tmpfs is its `sizeLimit`, else the pod's memory
 * limit (the sum of its containers' limits, when all have one), else the kernel's
 * default (half the RAM); secret and projected volumes get the kernel's default.
 *
 * Mounting needs root (CAP_SYS_ADMIN). Not root: the volume stays a plain
 * directory on the node's disk and the mounter logs one warning (per nodelet).
 * `mount`/`umount` run through the mounter's own long-lived helper (`core/exec`),
 * not one `execFile` per volume: every pod's service-account token volume is
 * projected, so a fork of the whole nodelet per pod otherwise. Where Perl is
 * installed, that helper makes the mount(2)/umount2(2) calls itself
 * (`core/exec/mount-syscalls.ts`); elsewhere it is `/bin/sh` running `mount`.
 *
 *   setUp ──► wanted? ─no──► plugin.setUp (plain dir)
 *               │ yes
 *               ▼
 *             root? ─no──► warn once ──► plugin.setUp (plain dir)
 *               │ yes
 *               ▼
 *             mkdir ──► mounted already? ─no──► mount -t tmpfs ──► plugin.setUp (files land in RAM)
 *
 *   tearDown ──► mounted? ─yes──► umount (busy: umount -l) ──► plugin.tearDown (if any) ──► dir removed by the caller
 *               (with the Perl helper, `umount-mounted` asks and unmounts in one call)
 */
import type { V1Pod, V1Volume } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import { nodeletError } from '../errors/index.ts';
import { dirMaker, helperShell, mountSyscalls, type HelperShell } from '../exec/index.ts';
import { quantityUnits } from '../quantity/index.ts';
import { isMountPoint } from './csi/mount-info.ts';
import { volumeDirFor } from './plugin-registry.ts';
import type { PreparedVolume, VolumePlugin } from './types.ts';

/** Mounts and unmounts tmpfs; one per nodelet (it remembers whether it warned). */
export interface TmpfsMounter {
  /** False when nodelet cannot mount (not root): volumes stay on disk. */
  readonly enabled: boolean;
  /** Mounts a tmpfs on `dir` (created if missing) unless one is there; `sizeBytes` undefined: the kernel's default. */
  mount(dir: string, mode: number, sizeBytes: number | undefined): Promise<void>;
  /** Unmounts `dir` if it is a mount point; `detached` when it was busy and only detached (`umount -l`). */
  unmount(dir: string): Promise<'none' | 'unmounted' | 'detached'>;
  /** Logs, once, that memory-backed volumes are plain directories here. */
  warnOnce(log: Logger): void;
}

/** Options of {@link createTmpfsMounter}. */
export interface TmpfsMounterOptions {
  /** Default: the process runs as root. */
  readonly enabled?: boolean;
  /** Runs a command (default: through a helper shell spawned when the mounter is made, if enabled); injectable for tests. */
  readonly exec?: (cmd: string, args: string[]) => Promise<unknown>;
  /** Tells whether `dir` is a mount point (default: `/proc/self/mountinfo`). */
  readonly isMounted?: (dir: string) => Promise<boolean>;
  /**
   * The Perl helper running `mount-syscalls.ts` (the composition root's, shared with the pod set-up's
   * dir maker): mounts go to it, and a new mount point and its mount are one `mount-new` call. Without
   * it: a helper of the mounter's own (Perl where it runs, else `/bin/sh`), and mount points through
   * libuv's pool.
   */
  readonly syscalls?: HelperShell;
  /** `exec` knows the Perl helper's own `mount-new` and `umount-mounted` (tests; with `syscalls` it does). */
  readonly mountNew?: boolean;
}

/** The node's tmpfs mounter. */
export function createTmpfsMounter(o: TmpfsMounterOptions = {}): TmpfsMounter {
  const enabled = o.enabled ?? process.getuid?.() === 0;
  const exec =
    o.exec ??
    (!enabled
      ? () => Promise.reject(nodeletError('NDL_VOLUME_TMPFS', 'not root: cannot mount'))
      : (o.syscalls ?? helperShell({ errorCode: 'NDL_VOLUME_TMPFS', program: mountSyscalls() })));
  const mountNew = o.mountNew ?? (o.exec === undefined && enabled && o.syscalls !== undefined);
  const mounted = o.isMounted ?? ((dir: string) => isMountPoint(dir).catch(() => false));
  const dirs = dirMaker(o.syscalls);
  let warned = false;
  return {
    enabled,
    async mount(dir, mode, sizeBytes) {
      const opts = [`mode=${mode.toString(8).padStart(4, '0')}`, ...(sizeBytes !== undefined && sizeBytes > 0 ? [`size=${sizeBytes}`] : [])];
      const args = ['-t', 'tmpfs', '-o', opts.join(','), 'tmpfs', dir];
      // A dir made just now is no mount point: the mount table is read only for a dir that was there.
      // Where the Perl helper runs, the dir is made in the same round trip as its mount (through libuv's
      // pool, the `mkdir -p` of a volume's three missing levels took 175 ms at p50 under a 100-pod
      // burst: core/exec/dir-maker.ts); else in one call to the dir maker, then the mount.
      let made: boolean;
      if (mountNew) {
        made = String(await exec('mount-new', ['777', ...args]).catch((e: unknown) => Promise.reject(mountFailed(dir, e)))).trim() !== '-';
        if (made) return;
      } else made = (await dirs.make([dir], 0o777))[0] !== undefined;
      if (!made && (await mounted(dir))) return;
      await exec('mount', args).catch((e: unknown) => Promise.reject(mountFailed(dir, e)));
    },
    async unmount(dir) {
      try {
        // With the Perl helper, umount2(2) itself tells a dir that is no mount point (`-`): the
        // mount table (a line per mounted volume) is not read per volume torn down.
        if (mountNew) {
          if (String(await exec('umount-mounted', [dir])).trim() === '-') return 'none';
          return 'unmounted';
        }
        if (!(await mounted(dir))) return 'none';
        await exec('umount', [dir]);
        return 'unmounted';
      } catch {
        // Busy: a stopped module's worker may leave its preopened directory fd open (a WASI worker
        // ended by terminate() does not close them). Detach the mount now (MNT_DETACH); the kernel
        // frees it when the last fd closes, and the volume dir can be removed.
      }
      try {
        await exec('umount', ['-l', dir]);
        return 'detached';
      } catch (e) {
        throw nodeletError('NDL_VOLUME_TMPFS', `umount ${dir} failed: ${String((e as { stderr?: string }).stderr || (e as Error).message).trim()}`, e);
      }
    },
    warnOnce(log) {
      if (warned) return;
      warned = true;
      log.warn({}, 'nodelet does not run as root: emptyDir medium Memory, secret and projected volumes are plain directories on disk (no tmpfs)');
    },
  };
}

function mountFailed(dir: string, e: unknown): unknown {
  return nodeletError('NDL_VOLUME_TMPFS', `mount -t tmpfs on ${dir} failed: ${String((e as { stderr?: string }).stderr || (e as Error).message).trim()}`, e);
}

/** The pod's memory limit: the sum of its containers' limits when every container has one. */
export function podMemoryLimit(pod: V1Pod): number | undefined {
  const limits = (pod.spec?.containers ?? []).map((c) => quantityUnits((c.resources?.limits as Record<string, string> | undefined)?.['memory']));
  if (limits.length === 0 || limits.some((l) => !(l > 0))) return undefined;
  return limits.reduce((a, b) => a + b, 0);
}

/** The tmpfs size of a Memory emptyDir: its sizeLimit, else the pod's memory limit. */
export function memoryEmptyDirSize(volume: V1Volume, pod: V1Pod): number | undefined {
  const limit = quantityUnits(volume.emptyDir?.sizeLimit as string | undefined);
  return limit > 0 ? limit : podMemoryLimit(pod);
}

/** Which volumes of a plugin go on tmpfs, with what mode and size. */
export interface TmpfsPolicy {
  wanted(volume: V1Volume): boolean;
  readonly mode: number;
  size(volume: V1Volume, pod: V1Pod): number | undefined;
  /** The note a volume left on disk gets (non-root). */
  readonly onDiskNote: string;
}

/** Wraps `plugin` so that the volumes `policy` wants are tmpfs mounts (see the file header). */
export function tmpfsBacked(plugin: VolumePlugin, mounter: TmpfsMounter, policy: TmpfsPolicy): VolumePlugin {
  return {
    pluginName: plugin.pluginName,
    waitsForDir: plugin.waitsForDir,
    canSupport: (v) => plugin.canSupport(v),
    async setUp(volume, ctx): Promise<PreparedVolume> {
      if (!policy.wanted(volume)) return plugin.setUp(volume, ctx);
      if (!mounter.enabled) {
        mounter.warnOnce(ctx.log);
        const p = await plugin.setUp(volume, ctx);
        return { ...p, notes: [policy.onDiskNote] };
      }
      const mounting = mounter.mount(volumeDirFor(ctx.podDir, plugin.pluginName, volume.name), policy.mode, policy.size(volume, ctx.pod));
      let p: PreparedVolume;
      if (plugin.waitsForDir) {
        // The plugin's token request and API reads run while the dir is mounted; it writes after.
        mounting.catch(() => undefined); // awaited below (and by the plugin) when it matters
        p = await plugin.setUp(volume, { ...ctx, dirReady: mounting, dirInMemory: true });
        await mounting;
      } else {
        await mounting;
        p = await plugin.setUp(volume, { ...ctx, dirInMemory: true });
      }
      const { notes: _dropped, ...rest } = p;
      return rest;
    },
    async tearDown(volumeName, ctx) {
      if ((await mounter.unmount(ctx.volumeDir)) === 'detached')
        ctx.log?.warn(
          { volume: volumeName, dir: ctx.volumeDir },
          'tmpfs volume was busy (a descriptor still open): detached; the kernel frees it when the descriptor closes',
        );
      await plugin.tearDown?.(volumeName, ctx);
    },
  };
}

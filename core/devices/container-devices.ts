/**
 * Turns a container's device configuration (from the plugins' Allocate
 * responses) into what a provider can apply: env vars and mounts. For the
 * WASI provider mounts become preopened directories, so:
 *
 *  - a directory host path is mounted as is;
 *  - a file host path (sample-device-plugin mounts `/tmp/Dev-1`) is staged:
 *    hard-linked into `<stagingDir>/<n>/<file name>` and that directory is
 *    mounted at the file's parent path (the container sees only the device
 *    files there, not the host directory); files with the same parent share
 *    one staged directory;
 *  - device nodes, CDI devices and annotations cannot be applied by a provider
 *    without a container runtime: each becomes a warning, as do mounts that
 *    cannot be staged (other filesystem, missing host path) or that collide
 *    with a pod volume's mount path.
 *
 * Warnings are meant for a `Warning` event with reason {@link DEVICE_WARNING_REASON}.
 */
import { linkSync, mkdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { basename, join, posix } from 'node:path';
import type { Mount } from '@nodelet/plugin-api/v1';
import { nodeletError } from '../errors/index.ts';
import type { ContainerDeviceConfig } from './pod-devices.ts';

/** Event reason for device settings a provider cannot apply (nodelet's own; upstream has none). */
export const DEVICE_WARNING_REASON = 'DeviceConfigNotApplied';

/** What to apply to the container. */
export interface AppliedDeviceConfig {
  env: Record<string, string>;
  mounts: Mount[];
  warnings: string[];
}

interface Staged {
  dir: string;
  readOnly: boolean;
}

/**
 * Builds env and mounts for `cfg`. `stagingDir` is a per-container directory
 * nodelet owns (it is re-created); `taken` lists mount paths pod volumes use.
 */
export function applyDeviceConfig(cfg: ContainerDeviceConfig, stagingDir: string, taken: readonly string[] = []): AppliedDeviceConfig {
  const warnings = [...cfg.conflicts.map((c) => `conflicting device settings, the first one wins: ${c}`)];
  const mounts: Mount[] = [];
  const used = new Set(taken);
  const staged = new Map<string, Staged>();
  rmSync(stagingDir, { recursive: true, force: true });
  cfg.mounts.forEach((m, i) => {
    const where = `device mount ${m.hostPath} at ${m.containerPath}`;
    if (!posix.isAbsolute(m.containerPath)) return warnings.push(`${where}: container path is not absolute`);
    let isDir: boolean;
    let real: string;
    try {
      isDir = statSync(m.hostPath).isDirectory();
      real = realpathSync(m.hostPath);
    } catch (e) {
      return warnings.push(`${where}: host path unavailable (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
    }
    if (isDir) {
      if (used.has(m.containerPath)) return warnings.push(`${where}: path already used by a volume mount`);
      used.add(m.containerPath);
      // Mount.hostPath is a real path (providers check at access time that it still is).
      return mounts.push({ name: `device-mount-${i}`, hostPath: real, containerPath: m.containerPath, readOnly: m.readOnly });
    }
    const parent = posix.dirname(m.containerPath);
    let s = staged.get(parent);
    if (!s) {
      if (used.has(parent)) return warnings.push(`${where}: parent path ${parent} already used by a volume mount`);
      s = { dir: join(stagingDir, String(staged.size)), readOnly: m.readOnly };
      mkdirSync(s.dir, { recursive: true, mode: 0o750 });
      staged.set(parent, s);
      used.add(parent);
    }
    try {
      linkSync(m.hostPath, join(s.dir, basename(m.containerPath)));
      s.readOnly &&= m.readOnly;
    } catch (e) {
      warnings.push(`${where}: cannot stage the file (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
    }
  });
  for (const [parent, s] of staged)
    mounts.push({ name: `device-mount-dir-${basename(s.dir)}`, hostPath: realpathSync(s.dir), containerPath: parent, readOnly: s.readOnly });
  for (const d of cfg.devices) warnings.push(`device ${d.hostPath} at ${d.containerPath} (${d.permissions}) cannot be applied by this provider`);
  for (const c of cfg.cdiDevices) warnings.push(`CDI device ${c} cannot be applied by this provider`);
  for (const k of Object.keys(cfg.annotations)) warnings.push(`container annotation ${k} cannot be applied by this provider`);
  return { env: { ...cfg.envs }, mounts, warnings };
}

/** The staging directory of a container under its pod directory. */
export function deviceStagingDir(podDir: string, containerName: string): string {
  if (containerName === '' || containerName === '.' || containerName === '..' || containerName.includes('/')) {
    throw nodeletError('NDL_DEVICE_ALLOCATE', `invalid container name ${JSON.stringify(containerName)}`);
  }
  return join(podDir, 'device-plugin-mounts', containerName);
}

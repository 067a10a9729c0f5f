/**
 * DRA claims at container start, as a container-options contributor
 * (upstream `GetResources` → the CDI devices of `PrepareDynamicResources`):
 * the CDI device ids prepared for the claims a container references
 * (`resources.claims`) are looked up in the CDI spec files, and their env
 * (lowest precedence) and directory mounts are applied. What a provider
 * without a container runtime cannot apply — device nodes, hooks, a file
 * mount, a mount over a path already taken, a device id no spec defines —
 * becomes a `Warning` event ({@link DRA_WARNING_REASON}).
 */
import { statSync } from 'node:fs';
import { posix } from 'node:path';
import type { Mount } from '@nodelet/plugin-api/v1';
import type { ContainerOptionsContributor, ContainerWarning } from '../pods/index.ts';
import { envRecord, resolveCdiDevices } from './cdi.ts';
import type { DraManager } from './dra-manager.ts';

/** Event reason for CDI edits a provider cannot apply (nodelet's own; upstream has none). */
export const DRA_WARNING_REASON = 'DynamicResourceNotApplied';

/** The contributor of DRA env and mounts; `cdiDirs` are read at each container start. */
export function draContainerOptions(manager: Pick<DraManager, 'cdiDeviceIds'>, cdiDirs: readonly string[]): ContainerOptionsContributor {
  return {
    name: 'dra',
    env(pod, container) {
      const ids = manager.cdiDeviceIds(pod, container);
      return ids.length ? envRecord(resolveCdiDevices(cdiDirs, ids).env) : {};
    },
    mounts(pod, container, { taken }) {
      const ids = manager.cdiDeviceIds(pod, container);
      if (ids.length === 0) return {};
      const r = resolveCdiDevices(cdiDirs, ids);
      const warnings: ContainerWarning[] = [];
      const warn = (message: string) => warnings.push({ reason: DRA_WARNING_REASON, message });
      for (const id of r.unresolved) warn(`CDI device ${id} is not defined by any CDI spec in ${cdiDirs.join(', ')}`);
      for (const p of r.deviceNodes) warn(`CDI device node ${p} cannot be given to this container (no device nodes without a container runtime)`);
      for (const h of r.hooks) warn(`CDI hook ${h} cannot be run for this container (no OCI hooks without a container runtime)`);
      const used = new Set(taken);
      const mounts: Mount[] = [];
      for (const m of r.mounts) {
        const at = posix.normalize(m.containerPath);
        let dir = false;
        try {
          dir = statSync(m.hostPath).isDirectory();
        } catch {
          dir = false;
        }
        if (!dir) warn(`CDI mount ${m.hostPath} → ${at} is not a directory on the host; only directories can be mounted`);
        else if (used.has(at)) warn(`CDI mount ${m.hostPath} → ${at} collides with a path already mounted`);
        else {
          used.add(at);
          mounts.push({ name: `dra-cdi-${mounts.length}`, hostPath: m.hostPath, containerPath: at, readOnly: (m.options ?? []).includes('ro') });
        }
      }
      return { mounts, warnings };
    },
  };
}

/**
 * The inputs of the CSI mount calls that come from the pod, the CSIDriver and
 * referenced secrets: the lifecycle-mode check, the volume capability, and
 * secret data — each failing with upstream's wording.
 */
import type { V1CSIDriver } from '@kubernetes/client-node';
import type { VolumeCapability } from '../../../sockets/csi.ts';
import { errorDetail, nodeletError } from '../../errors/index.ts';
import type { VolumeContext } from '../types.ts';
import { csiLog } from './csi-paths.ts';
import { csiAccessMode, type CsiVolumeSpec, type SecretRef } from './volume-spec.ts';

/** Upstream `supportsVolumeLifecycleMode`. */
export function checkLifecycleMode(spec: CsiVolumeSpec, csiDriver: V1CSIDriver | undefined): void {
  const prefix = 'mounter.SetupAt failed to check volume lifecycle mode: ';
  if (!csiDriver) {
    if (spec.mode === 'Persistent') return;
    throw nodeletError('NDL_CSI_VOLUME', csiLog(`${prefix}volume mode ${q(spec.mode)} not supported by driver ${spec.driver} (no CSIDriver object)`));
  }
  const modes = csiDriver.spec?.volumeLifecycleModes ?? ['Persistent'];
  if (!modes.includes(spec.mode)) {
    throw nodeletError(
      'NDL_CSI_VOLUME',
      csiLog(`${prefix}volume mode ${q(spec.mode)} not supported by driver ${spec.driver} (only supports [${modes.map(q).join(' ')}])`),
    );
  }
}

export function volumeCapability(spec: CsiVolumeSpec, singleNodeMultiWriter: boolean): VolumeCapability {
  return {
    mount: { fs_type: spec.fsType, mount_flags: [...spec.mountOptions] },
    access_mode: { mode: csiAccessMode(spec.accessMode, singleNodeMultiWriter) as never },
  };
}

/** The string data of a referenced secret (upstream `getCredentialsFromSecret`). */
export async function secretsOf(ctx: VolumeContext, ref: SecretRef | undefined, what: string): Promise<Record<string, string>> {
  if (!ref) return {};
  const fail = (why: string): never => {
    throw nodeletError(
      'NDL_VOLUME_SOURCE',
      `fetching ${what} ${ref.namespace}/${ref.name} failed: failed to find the secret ${ref.name} in the namespace ${ref.namespace} with error: ${why}`,
    );
  };
  const secret = await ctx.source.getSecret(ref.namespace, ref.name).catch((e) => fail(errorDetail(e)));
  if (!secret) return fail(`secrets ${q(ref.name)} not found`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(secret.data ?? {})) out[k] = Buffer.from(v, 'base64').toString('utf8');
  for (const [k, v] of Object.entries(secret.stringData ?? {})) out[k] = v;
  return out;
}

function q(s: string): string {
  return JSON.stringify(s);
}

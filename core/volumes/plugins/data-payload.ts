/**
 * Payloads of configMap / secret / downwardAPI sources (upstream
 * `configmap.MakePayload`, `secret.MakePayload`, `downwardapi.CollectData`)
 * and the "fetch or optional" rule shared by volumes and projections.
 */
import type { V1ConfigMap, V1DownwardAPIVolumeFile, V1KeyToPath, V1Secret } from '@kubernetes/client-node';
import { errorDetail, nodeletError } from '../../errors/index.ts';
import { podFieldValue } from '../downward-api/field-path.ts';
import { resourceFieldValue } from '../downward-api/resource-field.ts';
import type { Payload } from '../payload-writer.ts';
import type { VolumeContext } from '../types.ts';

/** The default file mode of configMap, secret, downwardAPI and projected volumes (0644). */
export const DEFAULT_MODE = 0o644;

/** Fetches a configMap; missing + optional → empty object; missing → `configmap "x" not found`. */
export async function fetchConfigMap(ctx: VolumeContext, name: string, optional: boolean): Promise<V1ConfigMap> {
  const cm = await ctx.source.getConfigMap(ctx.pod.metadata?.namespace ?? 'default', name);
  if (cm) return cm;
  if (optional) return {};
  throw nodeletError('NDL_VOLUME_SOURCE', `configmap ${JSON.stringify(name)} not found`);
}

/** Fetches a secret; missing + optional → empty object; missing → `secret "x" not found`. */
export async function fetchSecret(ctx: VolumeContext, name: string, optional: boolean): Promise<V1Secret> {
  const s = await ctx.source.getSecret(ctx.pod.metadata?.namespace ?? 'default', name);
  if (s) return s;
  if (optional) return {};
  throw nodeletError('NDL_VOLUME_SOURCE', `secret ${JSON.stringify(name)} not found`);
}

function keyedPayload(
  items: readonly V1KeyToPath[] | undefined,
  all: Map<string, Buffer>,
  mode: number,
  optional: boolean,
  missing: (key: string) => string,
): Payload {
  const payload: Payload = new Map();
  if (!items || items.length === 0) {
    for (const [k, data] of all) payload.set(k, { data, mode });
    return payload;
  }
  for (const it of items) {
    const data = all.get(it.key);
    if (data === undefined) {
      if (optional) continue;
      throw nodeletError('NDL_VOLUME_SOURCE', missing(it.key));
    }
    payload.set(it.path, { data, mode: it.mode ?? mode });
  }
  return payload;
}

/** configMap `data` + `binaryData` (base64) → files, honouring `items`. */
export function configMapPayload(cm: V1ConfigMap, items: readonly V1KeyToPath[] | undefined, mode: number, optional: boolean): Payload {
  const all = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(cm.data ?? {})) all.set(k, Buffer.from(v, 'utf8'));
  for (const [k, v] of Object.entries(cm.binaryData ?? {})) all.set(k, Buffer.from(v, 'base64'));
  return keyedPayload(items, all, mode, optional, (k) => `configmap references non-existent config key: ${k}`);
}

/** secret `data` (base64) → files, honouring `items`. */
export function secretPayload(secret: V1Secret, items: readonly V1KeyToPath[] | undefined, mode: number, optional: boolean): Payload {
  const all = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(secret.data ?? {})) all.set(k, Buffer.from(v, 'base64'));
  return keyedPayload(items, all, mode, optional, (k) => `references non-existent secret key: ${k}`);
}

/** downwardAPI items → files. All item errors are reported together, like upstream's aggregate. */
export function downwardApiPayload(items: readonly V1DownwardAPIVolumeFile[] | undefined, mode: number, ctx: VolumeContext): Payload {
  const payload: Payload = new Map();
  const errors: string[] = [];
  for (const it of items ?? []) {
    try {
      let value = '';
      if (it.fieldRef) value = podFieldValue(ctx.pod, it.fieldRef, ctx);
      else if (it.resourceFieldRef) value = resourceFieldValue(ctx.pod, undefined, it.resourceFieldRef, ctx.nodeAllocatable);
      payload.set(it.path, { data: Buffer.from(value, 'utf8'), mode: it.mode ?? mode });
    } catch (e) {
      errors.push(errorDetail(e));
    }
  }
  if (errors.length > 0) throw nodeletError('NDL_VOLUME_SOURCE', errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`);
  return payload;
}

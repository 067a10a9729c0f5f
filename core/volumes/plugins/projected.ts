/**
 * `projected` volumes (upstream plugin `kubernetes.io/projected`): configMap,
 * secret, downwardAPI and serviceAccountToken sources merged into one dir.
 * The default `kube-api-access-*` volume (token + `ca.crt` from the
 * `kube-root-ca.crt` ConfigMap + `namespace`) is just such a volume.
 */
import type { V1Volume, V1VolumeProjection } from '@kubernetes/client-node';
import { errorDetail, nodeletError, isNodeletError } from '../../errors/index.ts';
import type { Payload } from '../payload-writer.ts';
import { tokenRefreshAt } from '../token-cache.ts';
import type { VolumeContext, VolumePlugin } from '../types.ts';
import { configMapPayload, DEFAULT_MODE, downwardApiPayload, fetchConfigMap, fetchSecret, secretPayload } from './data-payload.ts';
import { setUpDataVolume } from './data-volume.ts';

const PROJECTED_PLUGIN = 'kubernetes.io/projected';

/** The TokenRequest default lifetime (API server default of `expirationSeconds`). */
const DEFAULT_TOKEN_EXPIRATION_SECONDS = 3600;

interface Collected {
  payload: Payload;
  refreshAt?: Date;
}

async function collectSource(src: V1VolumeProjection, mode: number, ctx: VolumeContext, out: Collected): Promise<void> {
  const add = (p: Payload) => {
    for (const [k, v] of p) out.payload.set(k, v);
  };
  if (src.configMap) {
    const optional = src.configMap.optional === true;
    add(configMapPayload(await fetchConfigMap(ctx, src.configMap.name ?? '', optional), src.configMap.items, mode, optional));
  } else if (src.secret) {
    const optional = src.secret.optional === true;
    add(secretPayload(await fetchSecret(ctx, src.secret.name ?? '', optional), src.secret.items, mode, optional));
  } else if (src.downwardAPI) {
    add(downwardApiPayload(src.downwardAPI.items, mode, ctx));
  } else if (src.serviceAccountToken) {
    const tp = src.serviceAccountToken;
    const pod = ctx.pod;
    const expirationSeconds = tp.expirationSeconds ?? DEFAULT_TOKEN_EXPIRATION_SECONDS;
    const token = await ctx.source.requestServiceAccountToken(pod.metadata?.namespace ?? 'default', pod.spec?.serviceAccountName || 'default', {
      ...(tp.audience ? { audience: tp.audience } : {}),
      expirationSeconds,
      podName: pod.metadata?.name ?? '',
      podUID: pod.metadata?.uid ?? '',
    });
    out.payload.set(tp.path, { data: Buffer.from(token.token, 'utf8'), mode });
    const at = tokenRefreshAt(token.expirationTimestamp, expirationSeconds);
    if (!out.refreshAt || at < out.refreshAt) out.refreshAt = at;
  } else {
    const type = Object.keys(src).find((k) => (src as Record<string, unknown>)[k] != null) ?? 'empty';
    throw nodeletError('NDL_VOLUME_UNSUPPORTED', `projected source ${JSON.stringify(type)} is not supported on this node`);
  }
}

/** Collects every source (errors of all sources reported together, like upstream) and writes the files. */
export const projectedPlugin: VolumePlugin = {
  pluginName: PROJECTED_PLUGIN,
  waitsForDir: true,
  canSupport: (v: V1Volume) => v.projected != null,
  async setUp(volume, ctx) {
    const src = volume.projected!;
    const mode = src.defaultMode ?? DEFAULT_MODE;
    // The sources are read at once (a token request need not wait for a ConfigMap read) and
    // merged in spec order, so a later source still wins a path both give.
    const parts = await Promise.allSettled(
      (src.sources ?? []).map(async (s) => {
        const part: Collected = { payload: new Map() };
        await collectSource(s, mode, ctx, part);
        return part;
      }),
    );
    const out: Collected = { payload: new Map() };
    const errors: unknown[] = [];
    for (const r of parts) {
      if (r.status === 'rejected') {
        errors.push(r.reason);
        continue;
      }
      for (const [k, v] of r.value.payload) out.payload.set(k, v);
      if (r.value.refreshAt && (!out.refreshAt || r.value.refreshAt < out.refreshAt)) out.refreshAt = r.value.refreshAt;
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) {
      const first = errors.find((e) => isNodeletError(e));
      const detail = `[${errors.map((e) => errorDetail(e)).join(', ')}]`;
      throw nodeletError(isNodeletError(first) ? first.code : 'NDL_VOLUME_SOURCE', detail);
    }
    return setUpDataVolume(volume, ctx, PROJECTED_PLUGIN, 'projected', out.payload, out.refreshAt ? { refreshAt: out.refreshAt } : {});
  },
};

/**
 * `projected` volumes (upstream plugin `kubernetes.io/projected`): configMap,
 * secret, downwardAPI, serviceAccountToken and podCertificate sources merged
 * into one dir.
 * The default `kube-api-access-*` volume (token + `ca.crt` from the
 * `kube-root-ca.crt` ConfigMap + `namespace`) is just such a volume.
 */
import type { V1Pod, V1ServiceAccountTokenProjection, V1Volume, V1VolumeProjection } from '@kubernetes/client-node';
import type { TokenRequestOptions } from '../object-source.ts';
import { errorDetail, nodeletError, isNodeletError } from '../../errors/index.ts';
import type { Payload } from '../payload-writer.ts';
import { tokenRefreshAt } from '../token-cache.ts';
import type { VolumeContext, VolumePlugin } from '../types.ts';
import { configMapPayload, DEFAULT_MODE, downwardApiPayload, fetchConfigMap, fetchSecret, secretPayload } from './data-payload.ts';
import { setUpDataVolume } from './data-volume.ts';
import { podCertificatePayload } from './pod-certificate.ts';

const PROJECTED_PLUGIN = 'kubernetes.io/projected';

/** The TokenRequest default lifetime (API server default of `expirationSeconds`). */
const DEFAULT_TOKEN_EXPIRATION_SECONDS = 3600;

/** One service account token a pod's projected volume asks for. */
export interface PodTokenRequest {
  readonly namespace: string;
  readonly serviceAccount: string;
  readonly opts: TokenRequestOptions;
}

function tokenRequestOf(pod: V1Pod, tp: V1ServiceAccountTokenProjection): PodTokenRequest {
  return {
    namespace: pod.metadata?.namespace ?? 'default',
    serviceAccount: pod.spec?.serviceAccountName || 'default',
    opts: {
      ...(tp.audience ? { audience: tp.audience } : {}),
      expirationSeconds: tp.expirationSeconds ?? DEFAULT_TOKEN_EXPIRATION_SECONDS,
      podName: pod.metadata?.name ?? '',
      podUID: pod.metadata?.uid ?? '',
    },
  };
}

/**
 * The service account tokens the pod's projected volumes ask for, so that pod set-up can
 * request them first: a token request is the longest step of a projected volume, and it
 * needs neither the pod's directories nor its mount (a token cache joins the two asks).
 */
export function podTokenRequests(pod: V1Pod): PodTokenRequest[] {
  return (pod.spec?.volumes ?? []).flatMap((v) =>
    (v.projected?.sources ?? []).flatMap((s) => (s.serviceAccountToken ? [tokenRequestOf(pod, s.serviceAccountToken)] : [])),
  );
}

interface Collected {
  payload: Payload;
  refreshAt?: Date;
}

/** Collects source `index` of projected volume `volumeName` into `out`. */
async function collectSource(src: V1VolumeProjection, volumeName: string, index: number, mode: number, ctx: VolumeContext, out: Collected): Promise<void> {
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
    const r = tokenRequestOf(ctx.pod, tp);
    const token = await ctx.source.requestServiceAccountToken(r.namespace, r.serviceAccount, r.opts);
    out.payload.set(tp.path, { data: Buffer.from(token.token, 'utf8'), mode });
    const at = tokenRefreshAt(token.expirationTimestamp, r.opts.expirationSeconds);
    if (!out.refreshAt || at < out.refreshAt) out.refreshAt = at;
  } else if (src.podCertificate) {
    add(podCertificatePayload(src.podCertificate, volumeName, index, mode, ctx));
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
      (src.sources ?? []).map(async (s, i) => {
        const part: Collected = { payload: new Map() };
        await collectSource(s, volume.name, i, mode, ctx, part);
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

/**
 * The plain {@link ObjectSource}: one API call per read, 404 → `undefined`; a request
 * the apiserver refused because its caches lag the pod's binding is asked again
 * (`binding-lag-retry.ts`). Wrap it with `withTokenCache` (and/or informer caches)
 * for pod sync paths.
 */
import type { IssuedToken, ObjectSource, TokenRequestOptions } from './object-source.ts';
import { apiError, isApiNotFound, type KubeClients } from '../kube/index.ts';
import { nodeletError } from '../errors/index.ts';
import { retryBindingLag } from './binding-lag-retry.ts';

async function orUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await retryBindingLag(read);
  } catch (e) {
    if (isApiNotFound(e)) return undefined;
    throw apiError(e);
  }
}

/** An {@link ObjectSource} over the core/v1 API. */
export function createApiObjectSource(
  api: Pick<KubeClients['core'], 'readNamespacedConfigMap' | 'readNamespacedSecret' | 'createNamespacedServiceAccountToken'>,
): ObjectSource {
  return {
    getConfigMap: (namespace, name) => orUndefined(() => api.readNamespacedConfigMap({ name, namespace })),
    getSecret: (namespace, name) => orUndefined(() => api.readNamespacedSecret({ name, namespace })),
    async requestServiceAccountToken(namespace: string, serviceAccount: string, opts: TokenRequestOptions): Promise<IssuedToken> {
      const tr = await retryBindingLag(() =>
        api.createNamespacedServiceAccountToken({
          name: serviceAccount,
          namespace,
          body: {
            apiVersion: 'authentication.k8s.io/v1',
            kind: 'TokenRequest',
            spec: {
              // An empty list makes the API server use its own audiences (as upstream's nil).
              audiences: opts.audience ? [opts.audience] : [],
              expirationSeconds: opts.expirationSeconds,
              boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: opts.podName, uid: opts.podUID },
            },
          },
        }),
      ).catch((e: unknown) => {
        throw apiError(e);
      });
      if (!tr.status?.token) throw nodeletError('NDL_VOLUME_SOURCE', `TokenRequest for ${namespace}/${serviceAccount} returned no token`);
      if (!tr.status.expirationTimestamp)
        throw nodeletError('NDL_VOLUME_SOURCE', `TokenRequest for ${namespace}/${serviceAccount} returned no expirationTimestamp`);
      return { token: tr.status.token, expirationTimestamp: new Date(tr.status.expirationTimestamp) };
    },
  };
}

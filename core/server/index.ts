/** The face of core/server: what other folders may use; everything else in the folder is private to it. */
export type { AuthnOptions } from './authn.ts';
export { alwaysAllow, type Authorizer } from './authz.ts';
export { watchServingCert } from './cert-reloader.ts';
export { createKubeletServer } from './kubelet-server.ts';
export type { ContainerTarget, PodSource } from './pod-source.ts';
export { loadServingCert } from './serving-cert.ts';
export { ensureLocalClient, type LocalClient, localClientCa } from './standalone-client.ts';
export { apiTokenReviewer, cachedTokenAuthenticator } from './token-review.ts';
export { apiAccessReviewer, webhookAuthorizer } from './webhook-authz.ts';

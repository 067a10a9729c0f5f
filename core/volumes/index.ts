/** Pod volumes: set-up, mounts, tear-down, and the plugin extension point. */
export { prepareVolumes, teardownVolumes, volumeFailures, failedMountMessage } from './prepare.ts';
export { VolumePluginRegistry, escapePluginName, volumeDirFor } from './plugin-registry.ts';
export { configMapPlugin, downwardApiPlugin, emptyDirPlugin, hostPathPlugin, projectedPlugin, secretPlugin } from './plugins/index.ts';
export { podTokenRequests, type PodTokenRequest } from './plugins/projected.ts';
export { imageVolumePlugin, type ImageVolumePluginDeps } from './plugins/image.ts';
export type { PreparedVolume, VolumeContext, VolumePlugin, TearDownContext } from './types.ts';
export type { ObjectSource, TokenRequestOptions, IssuedToken } from './object-source.ts';
export type { PodCertificateBundle, PodCertificateSource, PodCertificates } from './pod-certificate-source.ts';
export { createApiObjectSource } from './api-object-source.ts';
export { withTokenCache, tokenRefreshAt } from './token-cache.ts';
export { writePayload, type Payload } from './payload-writer.ts';
export { startCsi, type Csi, type CsiVolumeUsage, type StartCsiOptions } from './csi/index.ts';
export { podFieldValue } from './downward-api/field-path.ts';
export { resourceFieldValue } from './downward-api/resource-field.ts';
export { WatchingObjectSource, type StartObjectWatch, type SingleObjectWatch, type WatchedKind } from './object-watch-manager.ts';
export { apiObjectWatch } from './api-object-watch.ts';
export { podObjectRefs, type PodObjectRefs } from './pod-object-refs.ts';
export { createTmpfsMounter, memoryEmptyDirSize, tmpfsBacked, type TmpfsMounter, type TmpfsPolicy } from './tmpfs.ts';

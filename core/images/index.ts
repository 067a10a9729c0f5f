/**
 * core/images: the OCI distribution client and content-addressed image store
 * behind the `ImageService` providers receive.
 */
export { OciImageService } from './image-service.ts';
export { parseReference, formatReference, repositoryOf, registryHostOf, type ImageReference } from './reference.ts';
export { WASM_LAYER_TYPES } from './manifest.ts';
export { RegistryError } from './registry-error.ts';
export { credentialsFor } from './credentials.ts';
export { dockerConfigCredentials } from './docker-config.ts';
export { type NodeImageService, openImageService, podImages } from './local-images.ts';
export { pullSecretCredentials } from './pull-secrets.ts';
export { defaultPullPolicy, type ImageVolumeRequest, type ImageVolumeService, type PulledImageVolume } from './volume-pull.ts';
export { DEFAULT_CHUNK_BYTES, type PushProgress, pushWasmModule } from './registry-push.ts';

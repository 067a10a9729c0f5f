/** The face of core/eviction: pod eviction by the kubelet (so far: emptyDir sizeLimit, upstream's localStorageEviction). */
export { startEmptyDirLimits, type EmptyDirLimitOptions } from './empty-dir-limit.ts';

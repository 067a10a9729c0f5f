/** The face of core/eviction: pod eviction by the kubelet (emptyDir sizeLimit, and the eviction manager: pressure conditions, thresholds, ranking). */
export { startEmptyDirLimits, diskUsage, type EmptyDirLimitOptions } from './empty-dir-limit.ts';
export { EvictionManager, type EvictionManagerOptions, type EvictionSettings } from './eviction-manager.ts';
export type { PodUsageStats } from './ranking.ts';

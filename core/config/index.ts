/** The face of core/config: what other folders may use; everything else in the folder is private to it. */
export { parseCommandLine } from './flags.ts';
export { labelKeyError, labelValueError } from './labels.ts';
export { BUNDLED_PROVIDERS_DIR, type NodeletOptions } from './options.ts';
export { KUBELET_COMPATIBLE_VERSION, packageVersion } from './repo-root.ts';
export type { LogFormat, LogLevel } from './values.ts';
export { EVICTION_SIGNALS, parseThresholdValue, type EvictionSignal, type ThresholdValue } from './eviction.ts';

/**
 * The CRI container log format (what containerd writes and `kubectl logs`
 * reads): one record per line, `<RFC3339Nano UTC> <stdout|stderr> <F|P> <content>`.
 *
 * The implementation is plain JavaScript (`cri-log-impl.mjs`, typed by
 * `cri-log-impl.d.mts`) so that provider worker threads, which run without
 * tsx, can load it: import {@link CRI_LOG_MODULE_URL} from inside a worker.
 */
export * from './cri-log-impl.mjs';

/** URL of the plain-JS implementation, for `import()` inside a worker thread started without a TS loader. */
export const CRI_LOG_MODULE_URL: string = new URL('./cri-log-impl.mjs', import.meta.url).href;

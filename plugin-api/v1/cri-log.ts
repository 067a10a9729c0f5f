/**
 * The CRI container log format (what containerd writes and `kubectl logs`
 * reads): one record per line, `<RFC3339Nano UTC> <stdout|stderr> <F|P> <content>`.
 *
 * The implementation is plain JavaScript (`cri-log-impl.mjs`, typed with
 * JSDoc; the build emits its declarations) so that provider worker threads,
 * which run without a TypeScript loader, can load it: import
 * {@link CRI_LOG_MODULE_URL} from inside a worker.
 */
export * from './cri-log-impl.mjs';

/** URL of the plain-JS implementation, for `import()` inside a worker thread started without a TS loader. */
export const CRI_LOG_MODULE_URL: string = new URL('./cri-log-impl.mjs', import.meta.url).href;

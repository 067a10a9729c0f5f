/** The face of core/metrics: what other folders may use; everything else in the folder is private to it. */
export {
  imagePulls,
  metricsText,
  nodeName,
  podStartDuration,
  podWorkerDuration,
  registeredPlugins,
  restClientRequests,
  type RunningCounts,
} from './kubelet-metrics.ts';
export { countProbe, forgetProbeSeries, probeMetricsText, type ProbeSeries } from './probe-metrics.ts';
export { renderResourceMetrics, RESOURCE_METRICS_CONTENT_TYPE } from './resource-metrics.ts';
export type { ContainerUsage, PodUsage, StatsSnapshot, VolumeUsage } from './stats-types.ts';
export { setVolumeStats } from './volume-stats-metrics.ts';
export { reportPodCertificateStates, type PodCertificateStateCount } from './pod-certificate-metrics.ts';
export { summaryOf } from './summary.ts';

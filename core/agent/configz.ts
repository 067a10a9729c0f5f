/**
 * `/configz`: the configuration in effect, as upstream serves it —
 * `{"kubeletconfig": {...}}` with KubeletConfiguration (v1beta1) field names
 * and Go duration strings — for the settings nodelet has.
 */
import type { NodeletOptions } from '../config/index.ts';

/** A Go duration string of `ms` (`1m30s`, `500ms`, `0s`). */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  return `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
}

/** The KubeletConfiguration view of `o`. */
export function kubeletConfigOf(o: NodeletOptions): Record<string, unknown> {
  return {
    kind: 'KubeletConfiguration',
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    staticPodPath: o.podManifestPath,
    syncFrequency: goDuration(o.syncFrequencyMs),
    address: o.address,
    port: o.port,
    tlsCertFile: o.tlsCertFile,
    tlsPrivateKeyFile: o.tlsPrivateKeyFile,
    authentication: {
      x509: { clientCAFile: o.clientCAFile },
      webhook: { enabled: o.authenticationTokenWebhook, cacheTTL: goDuration(o.authenticationTokenWebhookCacheTtlMs) },
      anonymous: { enabled: o.anonymousAuth },
    },
    authorization: {
      mode: o.authorizationMode,
      webhook: {
        cacheAuthorizedTTL: goDuration(o.authorizationWebhookCacheAuthorizedTtlMs),
        cacheUnauthorizedTTL: goDuration(o.authorizationWebhookCacheUnauthorizedTtlMs),
      },
    },
    healthzPort: o.healthzPort,
    healthzBindAddress: o.healthzBindAddress,
    registerNode: o.registerNode,
    registerWithTaints: o.registerWithTaints,
    nodeStatusUpdateFrequency: goDuration(o.nodeStatusUpdateFrequencyMs),
    nodeStatusReportFrequency: goDuration(o.nodeStatusReportFrequencyMs),
    nodeLeaseDurationSeconds: o.nodeLeaseDurationSeconds,
    imageGCHighThresholdPercent: o.imageGCHighThresholdPercent,
    imageGCLowThresholdPercent: o.imageGCLowThresholdPercent,
    maxPods: o.maxPods,
    containerLogMaxSize: o.containerLogMaxSize,
    containerLogMaxFiles: o.containerLogMaxFiles,
    crashLoopBackOff: { maxContainerRestartPeriod: goDuration(o.maxContainerRestartPeriodMs) },
  };
}

/** Checks that span several settings, run on the resolved options. */
import { nodeletError } from '../errors/index.ts';
import { dnsSubdomainError } from './labels.ts';
import type { NodeletOptions } from './options.ts';

/** Throws NDL_CONFIG_INVALID_VALUE naming the flag when resolved options are inconsistent. */
export function validateOptions(o: NodeletOptions): void {
  const nameErr = dnsSubdomainError(o.nodeName);
  if (nameErr) {
    const source = o.hostnameOverride ? `"${o.hostnameOverride}"` : `host name "${o.nodeName}"`;
    throw nodeletError('NDL_CONFIG_INVALID_VALUE', `${source} for --hostname-override: node name ${nameErr}`);
  }
  if (o.imageGCLowThresholdPercent >= o.imageGCHighThresholdPercent) {
    throw nodeletError(
      'NDL_CONFIG_INVALID_VALUE',
      `"${o.imageGCLowThresholdPercent}" for --image-gc-low-threshold: must be less than --image-gc-high-threshold (${o.imageGCHighThresholdPercent})`,
    );
  }
  if (o.shutdownGracePeriodCriticalPodsMs > o.shutdownGracePeriodMs) {
    throw nodeletError(
      'NDL_CONFIG_INVALID_VALUE',
      `"${o.shutdownGracePeriodCriticalPodsMs / 1000}s" for --shutdown-grace-period-critical-pods: must be <= --shutdown-grace-period (${o.shutdownGracePeriodMs / 1000}s)`,
    );
  }
  for (const signal of Object.keys(o.evictionSoft)) {
    if (o.evictionSoftGracePeriodMs[signal] === undefined)
      throw nodeletError('NDL_CONFIG_INVALID_VALUE', `--eviction-soft-grace-period: grace period must be specified for the soft eviction threshold ${signal}`);
  }
  if ((o.tlsCertFile === undefined) !== (o.tlsPrivateKeyFile === undefined)) {
    const [missing, other] = o.tlsCertFile === undefined ? ['--tls-cert-file', '--tls-private-key-file'] : ['--tls-private-key-file', '--tls-cert-file'];
    throw nodeletError('NDL_CONFIG_INVALID_VALUE', `${missing}: required when ${other} is set`);
  }
  if (o.bootstrapKubeconfig && !o.kubeconfig) {
    throw nodeletError('NDL_CONFIG_INVALID_VALUE', '--kubeconfig: required with --bootstrap-kubeconfig (the issued credentials are written there)');
  }
  if (o.serverTLSBootstrap && !o.kubeconfig) {
    throw nodeletError(
      'NDL_CONFIG_INVALID_VALUE',
      '--rotate-server-certificates: needs --kubeconfig (the serving certificate is requested from the apiserver)',
    );
  }
}

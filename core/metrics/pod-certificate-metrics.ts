/**
 * Upstream's `kubelet_podcertificate_states` (pkg/kubelet/metrics/collectors/
 * podcertificate_metrics.go) on `/metrics`: the pod certificate projected
 * sources of the node's pods by `signer_name` and `state` (`not_yet_issued`,
 * `fresh`, `overdue_for_refresh`, `expired`, `denied`, `failed`), read at
 * scrape time from the source the composition root gives
 * {@link reportPodCertificateStates} (the pod certificate manager).
 */
import { Gauge } from './prom-client.ts';
import { registry } from './kubelet-metrics.ts';

/** How many sources of one signer are in one state. */
export interface PodCertificateStateCount {
  readonly signerName: string;
  readonly state: string;
  readonly count: number;
}

let source: (() => readonly PodCertificateStateCount[]) | undefined;

new Gauge({
  name: 'kubelet_podcertificate_states',
  help: 'Gauge vector reporting the number of pod certificate projected volume sources, faceted by signer_name and state.',
  labelNames: ['signer_name', 'state'],
  registers: [registry],
  collect() {
    this.reset();
    for (const s of source?.() ?? []) this.set({ signer_name: s.signerName, state: s.state }, s.count);
  },
});

/** Makes `states` the source of `kubelet_podcertificate_states` (cluster mode). */
export function reportPodCertificateStates(states: () => readonly PodCertificateStateCount[]): void {
  source = states;
}

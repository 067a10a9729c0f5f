/**
 * A `V1Probe` with upstream's defaults applied (pkg/apis/core/v1/defaults.go
 * `SetDefaults_Probe`): periodSeconds 10, timeoutSeconds 1, successThreshold
 * 1, failureThreshold 3, initialDelaySeconds 0. Liveness and startup probes
 * must have successThreshold 1 (API validation); it is forced here too.
 */
import type { V1Probe } from '@kubernetes/client-node';
import type { ProbeKind } from './probe-types.ts';

/** A probe's timing and thresholds in milliseconds and counts. */
export interface ProbeSettings {
  initialDelayMs: number;
  periodMs: number;
  timeoutMs: number;
  successThreshold: number;
  failureThreshold: number;
  /** The probe-level `terminationGracePeriodSeconds` in ms (liveness/startup kills), if set. */
  terminationGraceMs?: number;
}

const pos = (v: number | undefined, dflt: number) => (v !== undefined && v > 0 ? v : dflt);

/** Applies upstream's defaults to `probe` of `kind`. */
export function probeSettings(kind: ProbeKind, probe: V1Probe): ProbeSettings {
  const s: ProbeSettings = {
    initialDelayMs: Math.max(0, probe.initialDelaySeconds ?? 0) * 1000,
    periodMs: pos(probe.periodSeconds, 10) * 1000,
    timeoutMs: pos(probe.timeoutSeconds, 1) * 1000,
    successThreshold: kind === 'Readiness' ? pos(probe.successThreshold, 1) : 1,
    failureThreshold: pos(probe.failureThreshold, 3),
  };
  if (kind !== 'Readiness' && probe.terminationGracePeriodSeconds !== undefined && probe.terminationGracePeriodSeconds !== null)
    s.terminationGraceMs = Math.max(0, probe.terminationGracePeriodSeconds) * 1000;
  return s;
}

/**
 * The vocabulary of core/probes (upstream `pkg/kubelet/prober/results` and
 * `pkg/probe`): the three probe kinds, a probe's result, and what a check
 * needs to know about its container (the address to probe, its ports, a way
 * to exec).
 */
import type { V1ContainerPort } from '@kubernetes/client-node';
import type { ExecResult } from '@nodelet/plugin-api/v1';

/** A probe's kind, spelled as in upstream's events (`Liveness probe failed: …`) and metrics. */
export type ProbeKind = 'Startup' | 'Readiness' | 'Liveness';

/**
 * One check's result: `success`, `warning` (a success with a `ProbeWarning`
 * event, e.g. a redirect to another host), `failure`, or `unknown` (the check
 * could not decide; the worker keeps counting nothing).
 */
export type CheckResult = 'success' | 'warning' | 'failure' | 'unknown';

/** The result and upstream-style output of one check. */
export interface CheckOutcome {
  result: CheckResult;
  output: string;
}

/** What a check needs about its container. */
export interface ProbeTarget {
  /** The address probed when the action names no host (see target-host.ts). */
  host: string;
  /** The container's ports (a named `port` is looked up here). */
  ports: readonly V1ContainerPort[];
  /** Runs a command in the container; absent when the provider cannot exec. */
  exec?(command: string[], timeoutMs: number, signal: AbortSignal): Promise<ExecResult>;
  /** The provider's name, for the message when it cannot exec. */
  providerName: string;
}

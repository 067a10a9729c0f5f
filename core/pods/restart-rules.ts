/**
 * Which containers restart after they exit, by upstream's rules
 * (k8s.io/kubernetes pkg/api/v1/pod/util.go: IsRestartableInitContainer,
 * ContainerShouldRestart, FindMatchingContainerRestartRule), with the
 * ContainerRestartRules feature on as in v1.36:
 *
 *   exit code ──► first restartPolicyRules entry whose exitCodes match?
 *                   │ action Restart ──► restart
 *                   └ none ──► container restartPolicy (Always | OnFailure | Never)?
 *                                └ none ──► pod restartPolicy (default Always)
 *
 * A sidecar is an init container with `restartPolicy: Always`: it keeps
 * running (and is restarted on every exit) beside the app containers until
 * they have all ended for good.
 */
import type { V1Container, V1PodSpec } from '@kubernetes/client-node';

type Policy = 'Always' | 'OnFailure' | 'Never';

/** Upstream IsRestartableInitContainer: an init container with `restartPolicy: Always` (a sidecar). */
export function isSidecar(spec: V1Container | undefined): boolean {
  return spec?.restartPolicy === 'Always';
}

/** The first of `spec.restartPolicyRules` that matches `exitCode` (upstream FindMatchingContainerRestartRule). */
export function matchingRestartRule(spec: V1Container, exitCode: number): { action: string } | undefined {
  for (const rule of spec.restartPolicyRules ?? []) {
    const on = rule.exitCodes;
    if (!on) continue;
    const listed = (on.values ?? []).includes(exitCode);
    if ((on.operator === 'In' && listed) || (on.operator === 'NotIn' && !listed)) return rule;
  }
  return undefined;
}

const byPolicy = (policy: Policy, exitCode: number): boolean => policy === 'Always' || (policy === 'OnFailure' && exitCode !== 0);

/**
 * Upstream ContainerShouldRestart: whether a container that exited with
 * `exitCode` is started again. The container's own rules and policy come
 * first (restartPolicyRules only apply when the container sets restartPolicy),
 * then the pod's restartPolicy.
 */
export function containerShouldRestart(spec: V1Container | undefined, pod: V1PodSpec | undefined, exitCode: number): boolean {
  if (spec?.restartPolicy) {
    if (matchingRestartRule(spec, exitCode)?.action === 'Restart') return true;
    if (spec.restartPolicy === 'Always' || spec.restartPolicy === 'OnFailure' || spec.restartPolicy === 'Never') return byPolicy(spec.restartPolicy, exitCode);
  }
  return byPolicy((pod?.restartPolicy as Policy | undefined) ?? 'Always', exitCode);
}

/**
 * Whether a container killed while running (a failed liveness or startup
 * probe, a failed postStart hook) is started again: upstream consults only
 * the container-level policy there (there is no exit code to match rules
 * against), else the pod's: anything but Never restarts.
 */
export function restartsAfterKill(spec: V1Container | undefined, pod: V1PodSpec | undefined): boolean {
  if (isSidecar(spec)) return true;
  return (spec?.restartPolicy ?? pod?.restartPolicy ?? 'Always') !== 'Never';
}

/**
 * Label key/value syntax (apimachinery `IsQualifiedName`, `IsValidLabelValue`)
 * and the node labels a kubelet may set on its own Node
 * (k8s.io/kubelet/pkg/apis/well_known_labels.go, `ValidateKubeletFlags`).
 */
import { nodeletError } from '../errors/index.ts';

const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Label keys outside the allowed namespaces that a kubelet may still set. */
const KUBELET_LABELS: readonly string[] = [
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/instance-type',
  'beta.kubernetes.io/os',
  'failure-domain.beta.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'kubernetes.io/arch',
  'kubernetes.io/hostname',
  'kubernetes.io/os',
  'node.kubernetes.io/instance-type',
  'topology.kubernetes.io/region',
  'topology.kubernetes.io/zone',
];

/** Label namespaces (and their subdomains) a kubelet may set freely. */
const KUBELET_LABEL_NAMESPACES: readonly string[] = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

/** Returns why `s` is not a DNS-1123 subdomain, or undefined when it is one. */
export function dnsSubdomainError(s: string): string | undefined {
  if (s.length === 0 || s.length > 253) return 'must be 1-253 characters';
  for (const part of s.split('.')) {
    if (!DNS1123_LABEL.test(part)) {
      return 'must be lower-case alphanumerics, "-" and ".", starting and ending with an alphanumeric';
    }
  }
  return undefined;
}

/** Returns why `key` is not a valid label key (`[prefix/]name`), or undefined. */
export function labelKeyError(key: string): string | undefined {
  const slash = key.indexOf('/');
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (slash >= 0) {
    const prefix = key.slice(0, slash);
    const err = dnsSubdomainError(prefix);
    if (err) return `label key "${key}": prefix ${err}`;
  }
  if (name.length === 0 || name.length > 63) return `label key "${key}": name must be 1-63 characters`;
  if (!NAME.test(name)) {
    return `label key "${key}": name must be alphanumerics, "-", "_" and ".", starting and ending with an alphanumeric`;
  }
  return undefined;
}

/** Returns why `value` is not a valid label value (may be empty), or undefined. */
export function labelValueError(value: string): string | undefined {
  if (value === '') return undefined;
  if (value.length > 63) return `label value "${value}": must be at most 63 characters`;
  if (!NAME.test(value)) {
    return `label value "${value}": must be alphanumerics, "-", "_" and ".", starting and ending with an alphanumeric`;
  }
  return undefined;
}

function labelNamespace(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? '' : key.slice(0, slash);
}

function inDomain(namespace: string, domain: string): boolean {
  return namespace === domain || namespace.endsWith(`.${domain}`);
}

/** True if `key` is in the kubernetes.io / k8s.io namespaces (restricted for kubelets). */
function isKubernetesLabel(key: string): boolean {
  const ns = labelNamespace(key);
  return inDomain(ns, 'kubernetes.io') || inDomain(ns, 'k8s.io');
}

/** True if a kubelet may set `key` on its own Node (upstream `IsKubeletLabel`). */
export function isKubeletLabel(key: string): boolean {
  if (KUBELET_LABELS.includes(key)) return true;
  const ns = labelNamespace(key);
  return KUBELET_LABEL_NAMESPACES.some((allowed) => inDomain(ns, allowed));
}

/**
 * Parses `k=v,k2=v2` (upstream `--node-labels`) into a map, validating syntax
 * and the restricted namespaces. Throws an Error with a one-line reason.
 */
export function parseNodeLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const pair of text.split(',')) {
    if (pair.trim() === '') continue;
    const eq = pair.indexOf('=');
    if (eq < 0) throw nodeletError('NDL_CONFIG_INVALID_VALUE', `malformed pair "${pair}", expected key=value`);
    const key = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    const err = labelKeyError(key) ?? labelValueError(value);
    if (err) throw nodeletError('NDL_CONFIG_INVALID_VALUE', err);
    if (isKubernetesLabel(key) && !isKubeletLabel(key)) {
      throw nodeletError(
        'NDL_CONFIG_INVALID_VALUE',
        `label "${key}" is in the restricted kubernetes.io/k8s.io namespace; allowed are the prefixes ` +
          `${KUBELET_LABEL_NAMESPACES.join(', ')} and the labels ${KUBELET_LABELS.join(', ')}`,
      );
    }
    labels[key] = value;
  }
  return labels;
}

/**
 * Downward API field paths (`fieldRef`), as upstream's
 * `fieldpath.ExtractFieldPathAsString`, `ConvertDownwardAPIFieldLabel` and
 * the kubelet's `podFieldSelectorRuntimeValue`.
 */
import { nodeletError } from '../../errors/index.ts';
import type { V1ObjectFieldSelector, V1Pod } from '@kubernetes/client-node';

/** The runtime facts a field path may need besides the pod object. */
export interface PodRuntimeFacts {
  /** Node IPs, primary first (`status.hostIP` is the first). */
  readonly hostIPs: readonly string[];
  /** Pod IPs, primary first. */
  readonly podIPs: readonly string[];
}

const SUPPORTED = new Set([
  'metadata.annotations',
  'metadata.labels',
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.restartPolicy',
  'spec.serviceAccountName',
  'spec.schedulerName',
  'status.phase',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
]);

/** Go's `strconv.Quote` (the `%q` verb), used by {@link formatMap}. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    switch (ch) {
      case '"':
        out += '\\"';
        continue;
      case '\\':
        out += '\\\\';
        continue;
      case '\x07':
        out += '\\a';
        continue;
      case '\b':
        out += '\\b';
        continue;
      case '\f':
        out += '\\f';
        continue;
      case '\n':
        out += '\\n';
        continue;
      case '\r':
        out += '\\r';
        continue;
      case '\t':
        out += '\\t';
        continue;
      case '\v':
        out += '\\v';
        continue;
    }
    if (cp < 0x20 || cp === 0x7f) out += '\\x' + cp.toString(16).padStart(2, '0');
    else if (cp < 0x7f || /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(ch)) out += ch;
    else if (cp < 0x10000) out += '\\u' + cp.toString(16).padStart(4, '0');
    else out += '\\U' + cp.toString(16).padStart(8, '0');
  }
  return out + '"';
}

/** Upstream `FormatMap`: `key="value"` lines sorted by key, no trailing newline. */
export function formatMap(m: Readonly<Record<string, string>> | undefined): string {
  const keys = Object.keys(m ?? {}).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return keys.map((k) => `${k}=${goQuote(m![k]!)}`).join('\n');
}

/** `metadata.labels['a']` → `['metadata.labels', 'a']`. */
function splitSubscriptedPath(fieldPath: string): [string, string] | undefined {
  if (!fieldPath.endsWith("']")) return undefined;
  const i = fieldPath.indexOf("['");
  if (i < 0) return undefined;
  return [fieldPath.slice(0, i), fieldPath.slice(i + 2, -2)];
}

const NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Upstream `IsQualifiedName` (`[prefix/]name`). */
export function isQualifiedName(s: string): boolean {
  const parts = s.split('/');
  if (parts.length > 2) return false;
  const name = parts.at(-1)!;
  if (name.length === 0 || name.length > 63 || !NAME_PART.test(name)) return false;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)) return false;
  }
  return true;
}

/** Upstream `ExtractFieldPathAsString` (metadata fields only). Throws upstream's messages. */
function extractMetadataField(pod: V1Pod, fieldPath: string): string {
  const meta = pod.metadata ?? {};
  const sub = splitSubscriptedPath(fieldPath);
  if (sub) {
    const [p, key] = sub;
    if (p === 'metadata.annotations' || p === 'metadata.labels') {
      const check = p === 'metadata.annotations' ? key.toLowerCase() : key;
      if (!isQualifiedName(check))
        throw nodeletError('NDL_DOWNWARD_API', `invalid key subscript in ${fieldPath}: ${JSON.stringify(key)} is not a qualified name`);
      return (p === 'metadata.annotations' ? meta.annotations : meta.labels)?.[key] ?? '';
    }
    throw nodeletError('NDL_DOWNWARD_API', `fieldPath ${JSON.stringify(fieldPath)} does not support subscript`);
  }
  switch (fieldPath) {
    case 'metadata.annotations':
      return formatMap(meta.annotations);
    case 'metadata.labels':
      return formatMap(meta.labels);
    case 'metadata.name':
      return meta.name ?? '';
    case 'metadata.namespace':
      return meta.namespace ?? '';
    case 'metadata.uid':
      return meta.uid ?? '';
  }
  throw nodeletError('NDL_DOWNWARD_API', `unsupported fieldPath: ${fieldPath}`);
}

/** Upstream `ConvertDownwardAPIFieldLabel`: checks apiVersion and the path, maps `spec.host`. */
function convertFieldLabel(apiVersion: string | undefined, fieldPath: string): string {
  const version = apiVersion || 'v1';
  if (version !== 'v1') throw nodeletError('NDL_DOWNWARD_API', `unsupported pod version: ${version}`);
  const sub = splitSubscriptedPath(fieldPath);
  if (sub) {
    if (sub[0] === 'metadata.annotations' || sub[0] === 'metadata.labels') return fieldPath;
    throw nodeletError('NDL_DOWNWARD_API', `field label does not support subscript: ${fieldPath}`);
  }
  if (fieldPath === 'spec.host') return 'spec.nodeName';
  if (!SUPPORTED.has(fieldPath)) throw nodeletError('NDL_DOWNWARD_API', `field label not supported: ${fieldPath}`);
  return fieldPath;
}

/**
 * The value of a `fieldRef` for a running pod (kubelet
 * `podFieldSelectorRuntimeValue`). Throws upstream's messages.
 */
export function podFieldValue(pod: V1Pod, ref: V1ObjectFieldSelector, facts: PodRuntimeFacts): string {
  const fieldPath = convertFieldLabel(ref.apiVersion, ref.fieldPath);
  switch (fieldPath) {
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    case 'status.hostIP':
      if (facts.hostIPs.length === 0) throw nodeletError('NDL_DOWNWARD_API', 'no host IPs known for this node');
      return facts.hostIPs[0]!;
    case 'status.hostIPs':
      if (facts.hostIPs.length === 0) throw nodeletError('NDL_DOWNWARD_API', 'no host IPs known for this node');
      return facts.hostIPs.join(',');
    case 'status.podIP':
      return facts.podIPs[0] ?? '';
    case 'status.podIPs':
      return facts.podIPs.join(',');
  }
  return extractMetadataField(pod, fieldPath);
}

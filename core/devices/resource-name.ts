/**
 * Extended resource names, as upstream `v1helper.IsExtendedResourceName`
 * (pkg/apis/core/v1/helper/helpers.go): `domain/name`, not a native resource
 * (no `kubernetes.io/` part), not prefixed `requests.`, and
 * `requests.<name>` must be a qualified name.
 */

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

/** Upstream `validation.IsQualifiedName`: `[prefix/]name`, prefix a DNS subdomain (≤ 253), name ≤ 63. */
export function isQualifiedName(value: string): boolean {
  const parts = value.split('/');
  if (parts.length > 2) return false;
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix.length === 0 || prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix)) return false;
  }
  return name.length > 0 && name.length <= 63 && QUALIFIED_NAME_PART.test(name);
}

/** Upstream `IsNativeResource`: no domain, or a `kubernetes.io/` one. */
function isNativeResource(name: string): boolean {
  return !name.includes('/') || name.includes('kubernetes.io/');
}

/** Upstream `IsExtendedResourceName`: what a device plugin may advertise. */
export function isExtendedResourceName(name: string): boolean {
  if (isNativeResource(name) || name.startsWith('requests.')) return false;
  return isQualifiedName(`requests.${name}`);
}

/**
 * CSI driver version rules of the upstream kubelet, as pure functions:
 * `validateVersions` in pkg/volume/csi/csi_plugin.go and `ParseGeneric` /
 * `HighestSupportedVersion` in k8s.io/apimachinery/pkg/util/version.
 *
 * - versions must parse as "generic" versions (`[v]MAJOR.MINOR[.more][anything]`);
 * - versions with major > 1 are ignored (CSI 2.x need not be compatible);
 * - the highest remaining version must be 1.x (0.x is no longer supported);
 * - a driver registering under a name already registered must advertise a
 *   strictly higher version than the registered one.
 *
 * Messages match upstream's word for word; errors carry NDL_PLUGIN_VERSION.
 */
import { errorDetail, nodeletError } from '../errors/index.ts';

const CSI_PLUGIN_NAME = 'kubernetes.io/csi';
const VERSION_RE = /^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)$/;
const MAX_UINT64 = (1n << 64n) - 1n;

/** A parsed generic version; `toString()` prints its numeric components like Go's Version.String(). */
export class GenericVersion {
  constructor(readonly components: readonly bigint[]) {}

  get major(): bigint {
    return this.components[0];
  }

  /** -1, 0 or 1; missing trailing components count as zeros (Go's compareInternal). */
  compare(other: GenericVersion): -1 | 0 | 1 {
    const n = Math.max(this.components.length, other.components.length);
    for (let i = 0; i < n; i++) {
      const a = this.components[i] ?? 0n;
      const b = other.components[i] ?? 0n;
      if (a !== b) return a < b ? -1 : 1;
    }
    return 0;
  }

  lessThan(other: GenericVersion): boolean {
    return this.compare(other) < 0;
  }

  toString(): string {
    return this.components.join('.');
  }
}

/** Parses like Go's `version.ParseGeneric`; throws NDL_PLUGIN_VERSION with Go's wording as its detail. */
export function parseGenericVersion(str: string): GenericVersion {
  const m = VERSION_RE.exec(str);
  if (!m) throw nodeletError('NDL_PLUGIN_VERSION', `could not parse ${goQuote(str)} as version`);
  const parts = m[1].split('.');
  if (parts.length < 2) throw nodeletError('NDL_PLUGIN_VERSION', `illegal version string ${goQuote(str)}`);
  const components = parts.map((comp, i) => {
    if (i === 0 && comp.startsWith('0') && comp !== '0') {
      throw nodeletError('NDL_PLUGIN_VERSION', `illegal zero-prefixed version component ${goQuote(comp)} in ${goQuote(str)}`);
    }
    const n = BigInt(comp);
    if (n > MAX_UINT64) {
      throw nodeletError(
        'NDL_PLUGIN_VERSION',
        `illegal non-numeric version component ${goQuote(comp)} in ${goQuote(str)}: strconv.ParseUint: parsing ${goQuote(comp)}: value out of range`,
      );
    }
    return n;
  });
  return new GenericVersion(components);
}

/** Go's `version.HighestSupportedVersion`: highest version with major ≤ 1, which must be 1.x. */
export function highestSupportedVersion(versions: readonly string[]): GenericVersion {
  if (versions.length === 0) throw nodeletError('NDL_PLUGIN_VERSION', 'empty array for supported versions');
  let highest: GenericVersion | undefined;
  let lastErr: Error | undefined;
  for (let i = versions.length - 1; i >= 0; i--) {
    let v: GenericVersion;
    try {
      v = parseGenericVersion(versions[i]);
    } catch (e) {
      lastErr = e as Error;
      continue;
    }
    if (v.major > 1n) continue;
    if (highest === undefined || highest.lessThan(v)) highest = v;
  }
  if (highest === undefined) {
    throw nodeletError(
      'NDL_PLUGIN_VERSION',
      `could not find a highest supported version from versions (${goList(versions)}) reported: ${lastErr === undefined ? '<nil>' : errorDetail(lastErr)}`,
    );
  }
  if (highest.major !== 1n) throw nodeletError('NDL_PLUGIN_VERSION', `highest supported version reported is ${highest}, must be v1.x`);
  return highest;
}

/**
 * Upstream `RegistrationHandler.validateVersions`: returns the driver's highest
 * supported version. `registered` is the highest version of an already
 * registered driver with the same name, if any. `callerName` is
 * "ValidatePlugin" or "RegisterPlugin".
 */
export function validateCsiVersions(callerName: string, pluginName: string, versions: readonly string[], registered?: GenericVersion): GenericVersion {
  const prefix = `${CSI_PLUGIN_NAME}: ${callerName} for CSI driver ${goQuote(pluginName)} failed.`;
  if (versions.length === 0) {
    throw nodeletError('NDL_PLUGIN_VERSION', `${prefix} Plugin returned an empty list for supported versions`);
  }
  let highest: GenericVersion;
  try {
    highest = highestSupportedVersion(versions);
  } catch (e) {
    throw nodeletError('NDL_PLUGIN_VERSION', `${prefix} None of the versions specified ${goQuotedList(versions)} are supported. err=${errorDetail(e)}`);
  }
  if (registered !== undefined && !registered.lessThan(highest)) {
    throw nodeletError(
      'NDL_PLUGIN_VERSION',
      `${prefix} Another driver with the same name is already registered with a higher supported version: ${goQuote(String(registered))}`,
    );
  }
  return highest;
}

/** Upstream `RegistrationHandler.ValidatePlugin` for CSI: {@link validateCsiVersions} with its wrapping message. */
export function validateCsiPlugin(pluginName: string, endpoint: string, versions: readonly string[], registered?: GenericVersion): GenericVersion {
  try {
    return validateCsiVersions('ValidatePlugin', pluginName, versions, registered);
  } catch (e) {
    const detail = errorDetail(e);
    throw nodeletError('NDL_PLUGIN_VERSION', `validation failed for CSI Driver ${pluginName} at endpoint ${endpoint}: ${detail}`, e);
  }
}

/** Go's %q for a plain string (close enough: JSON escaping). */
function goQuote(s: string): string {
  return JSON.stringify(s);
}

/** Go's %v for []string. */
function goList(list: readonly string[]): string {
  return `[${list.join(' ')}]`;
}

/** Go's %q for []string. */
function goQuotedList(list: readonly string[]): string {
  return `[${list.map(goQuote).join(' ')}]`;
}

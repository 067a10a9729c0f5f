import { describe, expect, it } from 'vitest';
import { isNodeletError } from '../../../core/errors/catalogue.ts';
import { highestSupportedVersion, parseGenericVersion, validateCsiPlugin, validateCsiVersions } from '../../../core/pluginmanager/csi-versions.ts';

function errorOf(fn: () => unknown): Error & { detail?: string } {
  try {
    fn();
  } catch (e) {
    return e as Error & { detail?: string };
  }
  throw new Error('expected a throw');
}

describe('parseGenericVersion (apimachinery ParseGeneric)', () => {
  it('accepts v-prefixes, extra components and trailing text', () => {
    expect(String(parseGenericVersion('v1.2.3'))).toBe('1.2.3');
    expect(String(parseGenericVersion(' 1.0.0-beta+x '))).toBe('1.0.0');
    expect(String(parseGenericVersion('0.3'))).toBe('0.3');
  });
  it('rejects what Go rejects, with Go wording', () => {
    expect(errorOf(() => parseGenericVersion('1')).detail).toBe('illegal version string "1"');
    expect(errorOf(() => parseGenericVersion('abc')).detail).toBe('could not parse "abc" as version');
    expect(errorOf(() => parseGenericVersion('01.0')).detail).toBe('illegal zero-prefixed version component "01" in "01.0"');
  });
  it('compares with missing components as zeros', () => {
    expect(parseGenericVersion('1.0').compare(parseGenericVersion('1.0.0'))).toBe(0);
    expect(parseGenericVersion('1.2').lessThan(parseGenericVersion('1.10'))).toBe(true);
  });
});

describe('highestSupportedVersion', () => {
  it('ignores majors above 1 and picks the highest 1.x', () => {
    expect(String(highestSupportedVersion(['0.3.0', '1.2.0', '2.0.0', '1.10.0']))).toBe('1.10.0');
  });
  it('fails when only 2.x+ is offered', () => {
    expect(errorOf(() => highestSupportedVersion(['2.0.0', '3.1'])).detail).toBe(
      'could not find a highest supported version from versions ([2.0.0 3.1]) reported: <nil>',
    );
  });
  it('reports the parse error of the earliest unparsable entry', () => {
    expect(errorOf(() => highestSupportedVersion(['x', 'y'])).detail).toBe(
      'could not find a highest supported version from versions ([x y]) reported: could not parse "x" as version',
    );
  });
  it('fails when the highest is 0.x', () => {
    expect(errorOf(() => highestSupportedVersion(['0.3.0', '2.0.0'])).detail).toBe('highest supported version reported is 0.3.0, must be v1.x');
  });
});

describe('validateCsiVersions / validateCsiPlugin (pkg/volume/csi)', () => {
  it('returns the highest version', () => {
    expect(String(validateCsiVersions('RegisterPlugin', 'd', ['1.0.0', '1.5.0']))).toBe('1.5.0');
  });
  it('rejects an empty list', () => {
    const e = errorOf(() => validateCsiVersions('ValidatePlugin', 'd', []));
    expect(isNodeletError(e, 'NDL_PLUGIN_VERSION')).toBe(true);
    expect(e.detail).toBe('kubernetes.io/csi: ValidatePlugin for CSI driver "d" failed. Plugin returned an empty list for supported versions');
  });
  it('rejects unsupported versions with the upstream chain of messages', () => {
    const e = errorOf(() => validateCsiPlugin('d', '/p/csi.sock', ['2.0.0']));
    expect(e.detail).toBe(
      'validation failed for CSI Driver d at endpoint /p/csi.sock: kubernetes.io/csi: ValidatePlugin for CSI driver "d" failed. ' +
        'None of the versions specified ["2.0.0"] are supported. err=could not find a highest supported version from versions ([2.0.0]) reported: <nil>',
    );
  });
  it('a second driver with the same name must advertise a higher version', () => {
    const registered = parseGenericVersion('1.2.0');
    expect(errorOf(() => validateCsiVersions('ValidatePlugin', 'd', ['1.2.0'], registered)).detail).toBe(
      'kubernetes.io/csi: ValidatePlugin for CSI driver "d" failed. Another driver with the same name is already registered with a higher supported version: "1.2.0"',
    );
    expect(String(validateCsiVersions('ValidatePlugin', 'd', ['1.3.0'], registered))).toBe('1.3.0');
  });
});

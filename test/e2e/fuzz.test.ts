/**
 * The fuzz suite's short run in `npm test` (the long one is `npm run fuzz -- --count 1000`):
 * a fixed seed, about a hundred generated bad inputs across the kubelet API, static pod
 * manifests, Wasm modules, OCI content and plugin sockets against a standalone nodelet
 * started from the built entry. Every input must be classified; nodelet must stay up
 * and nothing may be written outside its roots.
 */
import { describe, expect, it } from 'vitest';
import { formatReport } from '../fuzz/outcome.ts';
import { passed, runFuzz } from '../fuzz/fuzz.ts';

describe('fuzz (short run)', () => {
  it('classifies ~100 seeded bad inputs of every kind with nodelet up and nothing written outside the roots', async () => {
    const report = await runFuzz({ seed: 20261201, count: 100 });
    expect(Object.keys(report.byTarget).sort()).toEqual(['kubelet-api', 'oci-content', 'plugin-sockets', 'static-pods', 'wasm-modules']);
    expect(report.inputs).toBeGreaterThanOrEqual(100);
    expect(report.escapes).toEqual([]);
    expect(report.failures, formatReport(report)).toEqual([]);
    expect(passed(report)).toBe(true);
  }, 600_000);
});

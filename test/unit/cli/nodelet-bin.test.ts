/** The real `nodelet` command: --help, --version, and errors for bad flags. */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeBinary } from '../../harness/node-binary.ts';

const BIN = resolve(import.meta.dirname, '..', '..', '..', 'bin', 'nodelet.mjs');
const run = (...args: string[]) => spawnSync(nodeBinary(), [BIN, ...args], { encoding: 'utf8', timeout: 20_000 });

describe('nodelet command', () => {
  it('--help exits 0 and lists the upstream flags', () => {
    const r = run('--help');
    expect(r.status).toBe(0);
    for (const f of ['--kubeconfig', '--hostname-override', '--root-dir', '--client-ca-file', '--providers-dir', '--pod-manifest-path'])
      expect(r.stdout).toContain(f);
  });

  it('an unknown flag exits non-zero with one line naming it', () => {
    const r = run('--no-such-flag=1');
    expect(r.status).not.toBe(0);
    expect(r.stderr.split('\n')[0]).toContain('--no-such-flag');
  });

  it('an invalid value names the flag', () => {
    const r = run('--max-pods=lots');
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/--max-pods/);
  });
});

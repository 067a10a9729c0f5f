/** deploy/systemd/nodelet.service passes `systemd-analyze verify` (Debian's systemd, installed by .ci/run). */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const UNIT = resolve(import.meta.dirname, '..', '..', '..', 'deploy', 'systemd', 'nodelet.service');

describe('nodelet.service', () => {
  it('verifies without errors or warnings', () => {
    const r = spawnSync('systemd-analyze', ['verify', UNIT], { encoding: 'utf8', timeout: 30_000 });
    expect(r.error).toBeUndefined();
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('restarts always, stops only nodelet with SIGTERM (the external WASI runtime outlives it) and keeps it in the host mount namespace', () => {
    const text = readFileSync(UNIT, 'utf8');
    const keys = text.split('\n').filter((l) => /^[A-Za-z]+=/.test(l));
    expect(keys).toEqual(
      expect.arrayContaining([
        'Restart=always',
        'KillSignal=SIGTERM',
        'KillMode=process',
        'Environment=NODELET_WASI_RUNTIME=external',
        'StartLimitIntervalSec=0',
      ]),
    );
    expect(keys.filter((k) => /^(MountFlags|PrivateMounts|ProtectSystem|PrivateTmp)=/.test(k))).toEqual([]);
  });
});

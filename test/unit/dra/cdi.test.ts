import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { envRecord, resolveCdiDevices } from '../../../core/dra/cdi.ts';

const dir = () => mkdtempSync(join(tmpdir(), 'nodelet-cdi-'));

describe('CDI specs', () => {
  it('merges spec-level and device edits of the requested ids from JSON and YAML specs; unknown ids are reported', () => {
    const a = dir();
    writeFileSync(
      join(a, 'drv-1.json'),
      JSON.stringify({
        cdiVersion: '0.3.0',
        kind: 'drv.example.com/test',
        containerEdits: { env: ['COMMON=1'] },
        devices: [
          { name: 'd1', containerEdits: { env: ['claim_x=true'], mounts: [{ hostPath: '/h', containerPath: '/c', options: ['ro'] }] } },
          { name: 'd2', containerEdits: { deviceNodes: [{ path: '/dev/x' }], hooks: [{ hookName: 'createContainer', path: '/bin/h' }] } },
        ],
      }),
    );
    writeFileSync(join(a, 'other.yaml'), 'cdiVersion: 0.6.0\nkind: y.example.com/k\ndevices:\n  - name: z\n    containerEdits:\n      env: ["Y=2"]\n');
    writeFileSync(join(a, 'broken.json'), '{');
    const r = resolveCdiDevices([a, join(a, 'missing')], ['drv.example.com/test=d1', 'drv.example.com/test=d2', 'y.example.com/k=z', 'nope/x=y']);
    expect(r.env).toEqual(['COMMON=1', 'claim_x=true', 'COMMON=1', 'Y=2']);
    expect(r.mounts).toEqual([{ hostPath: '/h', containerPath: '/c', options: ['ro'] }]);
    expect(r.deviceNodes).toEqual(['/dev/x']);
    expect(r.hooks).toEqual(['createContainer /bin/h']);
    expect(r.unresolved).toEqual(['nope/x=y']);
  });

  it('a later dir wins for a device defined twice', () => {
    const a = dir();
    const b = dir();
    for (const [d, v] of [
      [a, 'A'],
      [b, 'B'],
    ] as const) {
      mkdirSync(d, { recursive: true });
      writeFileSync(join(d, 's.json'), JSON.stringify({ kind: 'v.io/c', devices: [{ name: 'n', containerEdits: { env: [`W=${v}`] } }] }));
    }
    expect(resolveCdiDevices([a, b], ['v.io/c=n']).env).toEqual(['W=B']);
  });

  it('env strings become a record (later wins, no = is empty, =x is dropped)', () => {
    expect(envRecord(['A=1', 'B', 'A=2=3', '=x'])).toEqual({ A: '2=3', B: '' });
  });
});

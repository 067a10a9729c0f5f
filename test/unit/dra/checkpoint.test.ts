import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeCheckpoint, encodeCheckpoint, readCheckpoint, writeCheckpoint, type ClaimInfoState } from '../../../core/dra/checkpoint.ts';

const claim: ClaimInfoState = {
  ClaimUID: 'c-uid',
  ClaimName: 'c',
  Namespace: 'ns',
  PodUIDs: { p1: {}, p2: {} },
  DriverState: { 'drv.io': { Devices: [{ PoolName: 'pool', DeviceName: 'dev-0', RequestNames: ['req'], CDIDeviceIDs: ['drv.io/test=x'] }] } },
};

describe('DRA checkpoint', () => {
  it('round-trips in upstream shape with a checksum', () => {
    const text = encodeCheckpoint([claim]);
    const f = JSON.parse(text);
    expect(f).toMatchObject({ kind: 'DRACheckpoint', apiVersion: 'checkpoint.dra.kubelet.k8s.io/v1', ClaimInfoStateList: [claim] });
    expect(typeof f.Checksum).toBe('number');
    expect(decodeCheckpoint(text)).toEqual([claim]);
  });

  it('refuses a file whose checksum does not match, or that is not a checkpoint', () => {
    const f = JSON.parse(encodeCheckpoint([claim]));
    f.ClaimInfoStateList[0].ClaimName = 'other';
    expect(() => decodeCheckpoint(JSON.stringify(f))).toThrow(/NDL_DRA_CHECKPOINT|checksum mismatch/);
    expect(() => decodeCheckpoint('{"kind":"X"}')).toThrow(/not a DRACheckpoint/);
    expect(() => decodeCheckpoint('nope')).toThrow(/not JSON/);
  });

  it('writes atomically and reads back; a missing file is empty', () => {
    const d = mkdtempSync(join(tmpdir(), 'nodelet-dracp-'));
    const p = join(d, 'sub', 'dra_manager_state');
    expect(readCheckpoint(p)).toEqual([]);
    writeCheckpoint(p, [claim]);
    expect(readCheckpoint(p)).toEqual([claim]);
    writeFileSync(p, readFileSync(p, 'utf8').replace('dev-0', 'dev-1'));
    expect(() => readCheckpoint(p)).toThrow(/checksum mismatch/);
  });
});

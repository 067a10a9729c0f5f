import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  checkpointChecksum,
  CHECKPOINT_FILE,
  decodeCheckpoint,
  encodeCheckpoint,
  fnv32a,
  readCheckpoint,
  spewCheckpointData,
  writeCheckpoint,
  type CheckpointData,
} from '../../../core/devices/checkpoint.ts';
import { decodeContainerAllocateResponse, encodeContainerAllocateResponse } from '../../../core/devices/alloc-response.ts';
import { loadDevicePlugin } from '../../../sockets/deviceplugin.ts';
import { tmp } from './helpers.ts';

// Checksums printed by Go for these data: spew ConfigState{Indent:" ", SortKeys, DisableMethods, SpewKeys,
// DisablePointerAddresses, DisableCapacities}.Sprintf("%#v", data) hashed with hash/fnv New32a — i.e.
// upstream checksum.New on a checkpoint.checkpointData (go-spew d8f796af33cc, as pinned by k8s 1.36.3).
const GO_FIXTURES: Array<{ data: CheckpointData; checksum: number }> = [
  {
    data: {
      PodDeviceEntries: [
        {
          PodUID: 'b6c0e0a4-1111-2222-3333-444455556666',
          ContainerName: 'app',
          ResourceName: 'example.com/resource',
          DeviceIDs: { '-1': ['Dev-2', 'Dev-1'], '1': ['x'], '0': null },
          AllocResp: 'Ehr/AA==',
        },
        { PodUID: 'p2', ContainerName: 'c', ResourceName: 'r/é', DeviceIDs: null, AllocResp: null },
        { PodUID: '', ContainerName: 'c', ResourceName: 'r', DeviceIDs: {}, AllocResp: '' },
      ],
      RegisteredDevices: { 'z.io/b': ['1', '2'], 'a.io/a': [], 'B.io/x': null },
    },
    checksum: 3240530584,
  },
  { data: { PodDeviceEntries: null, RegisteredDevices: {} }, checksum: 3467439661 },
  { data: { PodDeviceEntries: [], RegisteredDevices: null }, checksum: 3252601439 },
];

describe('device manager checkpoint', () => {
  it('computes the same checksum as upstream Go', () => {
    for (const f of GO_FIXTURES) expect(checkpointChecksum(f.data)).toBe(f.checksum);
  });

  it('prints data like spew %#v (types on fields, none inside collections, keys sorted)', () => {
    expect(
      spewCheckpointData({
        PodDeviceEntries: [{ PodUID: 'u', ContainerName: 'c', ResourceName: 'a/b', DeviceIDs: { '1': ['d'], '-1': ['e', 'f'] }, AllocResp: 'AQI=' }],
        RegisteredDevices: { 'b/x': ['d'], 'a/y': null },
      }),
    ).toBe(
      '(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)[{PodUID:(string)u ContainerName:(string)c ResourceName:(string)a/b ' +
        'DeviceIDs:(checkpoint.DevicesPerNUMA)map[-1:[e f] 1:[d]] AllocResp:([]uint8)[1 2]}] RegisteredDevices:(map[string][]string)map[a/y:<nil> b/x:[d]]}',
    );
  });

  it('FNV-32a matches the reference vectors', () => {
    expect(fnv32a('')).toBe(0x811c9dc5);
    expect(fnv32a('a')).toBe(0xe40c292c);
    expect(fnv32a('foobar')).toBe(0xbf9cf968);
  });

  it('accepts a file in Go key order and rejects a tampered one', () => {
    const go = '{"Data":{"PodDeviceEntries":null,"RegisteredDevices":{}},"Checksum":3467439661}';
    expect(decodeCheckpoint(go)).toEqual({ PodDeviceEntries: null, RegisteredDevices: {} });
    expect(() => decodeCheckpoint(go.replace('{}', '{"a/b":[]}'))).toThrow(/checkpoint is corrupted: expected checksum 3467439661, actual \d+/);
    expect(() => decodeCheckpoint('{"Data":{"PodDeviceEntries":{}},"Checksum":1}')).toThrow(/PodDeviceEntries is not a list/);
    expect(() => decodeCheckpoint('[]')).toThrow(/no Data/);
  });

  it('round-trips through the file with upstream field names', () => {
    const dir = tmp();
    const data = GO_FIXTURES[0]!.data;
    writeCheckpoint(dir, data);
    const raw = JSON.parse(readFileSync(join(dir, CHECKPOINT_FILE), 'utf8'));
    expect(Object.keys(raw)).toEqual(['Data', 'Checksum']);
    expect(raw.Checksum).toBe(3240530584);
    expect(readCheckpoint(dir)).toEqual(data);
    expect(readCheckpoint(tmp())).toBeUndefined();
    expect(encodeCheckpoint(data)).toContain('"AllocResp":"Ehr/AA=="');
  });

  it('serialises ContainerAllocateResponse as protobuf and reads it back', async () => {
    await loadDevicePlugin(); // as the device manager does before it reads or writes an allocation
    const resp = {
      envs: { A: 'x'.repeat(300) },
      mounts: [{ container_path: '/c', host_path: '/h', read_only: true }],
      devices: [{ container_path: '/dev/x', host_path: '/dev/y', permissions: 'rw' }],
      annotations: { k: 'v' },
      cdi_devices: [{ name: 'vendor.com/dev=1' }],
    };
    const bytes = encodeContainerAllocateResponse(resp);
    expect(bytes[0]).toBe(0x0a); // field 1 (envs map entry), length-delimited
    expect(decodeContainerAllocateResponse(bytes)).toEqual(resp);
    expect(decodeContainerAllocateResponse(new Uint8Array())).toEqual({ envs: {}, mounts: [], devices: [], annotations: {}, cdi_devices: [] });
  });
});

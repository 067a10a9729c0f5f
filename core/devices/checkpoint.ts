/**
 * The device manager's checkpoint, `<root>/device-plugins/kubelet_internal_checkpoint`,
 * in upstream's JSON shape (pkg/kubelet/cm/devicemanager/checkpoint/checkpoint.go):
 *
 *     {"Data":{"PodDeviceEntries":[{"PodUID":"…","ContainerName":"…","ResourceName":"…",
 *              "DeviceIDs":{"-1":["Dev-1"]},"AllocResp":"<base64 ContainerAllocateResponse>"}],
 *              "RegisteredDevices":{"example.com/resource":["Dev-1","Dev-2"]}},
 *      "Checksum":1234567890}
 *
 * `Checksum` is upstream's `checksum.New(cp.Data)`: FNV-32a over
 * `spew.Sprintf("%#v", data)` with `SortKeys`, `SpewKeys`, no methods, no
 * pointer addresses, no capacities (k8s.io/utils/dump.ForHash), stored as a
 * uint64. {@link spewCheckpointData} prints that exact text for this one Go
 * type (`checkpoint.checkpointData`), so files written by nodelet verify in
 * the upstream kubelet and vice versa (checked against Go in the unit tests'
 * fixture). Two deviations from Go's `json.Unmarshal`: JSON keys must match
 * the field names exactly (Go also accepts other letter cases), and unknown
 * fields are ignored (as in Go).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { nodeletError } from '../errors/index.ts';
import { replaceFileSync } from '../paths/index.ts';

/** The checkpoint's file name (upstream `kubeletDeviceManagerCheckpoint`). */
export const CHECKPOINT_FILE = 'kubelet_internal_checkpoint';

/** One container's devices of one resource. Go's `PodDevicesEntry`. */
export interface CheckpointEntry {
  PodUID: string;
  ContainerName: string;
  ResourceName: string;
  /** Device IDs per NUMA node (`-1` = no topology); JSON object keys are the decimal node IDs. */
  DeviceIDs: Record<string, string[] | null> | null;
  /** The plugin's `ContainerAllocateResponse`, protobuf-serialized, base64 (Go `[]byte`). */
  AllocResp: string | null;
}

/** Go's `checkpointData`. `null` stands for Go's nil slice/map. */
export interface CheckpointData {
  PodDeviceEntries: CheckpointEntry[] | null;
  RegisteredDevices: Record<string, string[] | null> | null;
}

/** The file's top level. */
export interface CheckpointFile {
  Data: CheckpointData;
  Checksum: number;
}

const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

function spewStrings(list: readonly string[] | null | undefined): string {
  return list == null ? '<nil>' : `[${list.join(' ')}]`;
}

function spewBytes(b64: string | null): string {
  return b64 === null ? '<nil>' : `[${[...Buffer.from(b64, 'base64')].join(' ')}]`;
}

function spewDeviceIds(ids: CheckpointEntry['DeviceIDs']): string {
  if (ids === null) return '(checkpoint.DevicesPerNUMA)<nil>';
  const keys = Object.keys(ids).sort((a, b) => Number(a) - Number(b));
  return `(checkpoint.DevicesPerNUMA)map[${keys.map((k) => `${Number(k)}:${spewStrings(ids[k])}`).join(' ')}]`;
}

function spewEntry(e: CheckpointEntry): string {
  return (
    `{PodUID:(string)${e.PodUID} ContainerName:(string)${e.ContainerName} ResourceName:(string)${e.ResourceName}` +
    ` DeviceIDs:${spewDeviceIds(e.DeviceIDs)} AllocResp:([]uint8)${spewBytes(e.AllocResp)}}`
  );
}

/** The text Go's `dump.ForHash(checkpointData)` produces for `data`. */
export function spewCheckpointData(data: CheckpointData): string {
  const entries = data.PodDeviceEntries === null ? '<nil>' : `[${data.PodDeviceEntries.map(spewEntry).join(' ')}]`;
  const reg = data.RegisteredDevices;
  const registered =
    reg === null
      ? '<nil>'
      : `map[${Object.keys(reg)
          .sort(byteOrder)
          .map((k) => `${k}:${spewStrings(reg[k])}`)
          .join(' ')}]`;
  return `(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)${entries} RegisteredDevices:(map[string][]string)${registered}}`;
}

/** FNV-32a of a string's UTF-8 bytes. */
export function fnv32a(text: string): number {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** Upstream's checksum of checkpoint data. */
export function checkpointChecksum(data: CheckpointData): number {
  return fnv32a(spewCheckpointData(data));
}

/** Serializes `data` with its checksum (Go field order, as `json.Marshal` writes it). */
export function encodeCheckpoint(data: CheckpointData): string {
  const file: CheckpointFile = { Data: data, Checksum: checkpointChecksum(data) };
  return JSON.stringify(file);
}

function isStringList(v: unknown): v is string[] | null {
  return v === null || (Array.isArray(v) && v.every((s) => typeof s === 'string'));
}

function isListMap(v: unknown): v is Record<string, string[] | null> | null {
  return v === null || (typeof v === 'object' && !Array.isArray(v) && Object.values(v as object).every(isStringList));
}

function parseEntry(v: unknown, i: number): CheckpointEntry {
  const e = v as Record<string, unknown> | null;
  const bad = (what: string) => nodeletError('NDL_DEVICE_CHECKPOINT', `PodDeviceEntries[${i}]: ${what}`);
  if (e === null || typeof e !== 'object') throw bad('not an object');
  const str = (k: string) => {
    const s = e[k] ?? '';
    if (typeof s !== 'string') throw bad(`${k} is not a string`);
    return s;
  };
  const ids = e.DeviceIDs === undefined ? {} : e.DeviceIDs;
  if (!isListMap(ids) || Object.keys(ids ?? {}).some((k) => !/^-?\d+$/.test(k))) throw bad('DeviceIDs is not a map of NUMA node to device IDs');
  const alloc = e.AllocResp === undefined ? null : e.AllocResp;
  if (alloc !== null && typeof alloc !== 'string') throw bad('AllocResp is not base64 text');
  return { PodUID: str('PodUID'), ContainerName: str('ContainerName'), ResourceName: str('ResourceName'), DeviceIDs: ids, AllocResp: alloc };
}

/**
 * Parses and verifies a checkpoint. Throws on malformed JSON or shape, and
 * with upstream's `checkpoint is corrupted` text when the checksum differs.
 */
export function decodeCheckpoint(text: string): CheckpointData {
  const file = JSON.parse(text) as Partial<CheckpointFile> | null;
  if (file === null || typeof file !== 'object' || typeof file.Data !== 'object' || file.Data === null)
    throw nodeletError('NDL_DEVICE_CHECKPOINT', 'checkpoint has no Data object');
  const raw = file.Data as unknown as Record<string, unknown>;
  const entries = raw.PodDeviceEntries === undefined ? [] : raw.PodDeviceEntries;
  if (entries !== null && !Array.isArray(entries)) throw nodeletError('NDL_DEVICE_CHECKPOINT', 'PodDeviceEntries is not a list');
  const registered = raw.RegisteredDevices === undefined ? {} : raw.RegisteredDevices;
  if (!isListMap(registered)) throw nodeletError('NDL_DEVICE_CHECKPOINT', 'RegisteredDevices is not a map of resource to device IDs');
  const data: CheckpointData = { PodDeviceEntries: entries === null ? null : entries.map(parseEntry), RegisteredDevices: registered };
  const actual = checkpointChecksum(data);
  if (file.Checksum !== actual)
    throw nodeletError('NDL_DEVICE_CHECKPOINT', `checkpoint is corrupted: expected checksum ${String(file.Checksum)}, actual ${actual}`);
  return data;
}

/** Reads `<dir>/kubelet_internal_checkpoint`; `undefined` when there is none. */
export function readCheckpoint(dir: string): CheckpointData | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, CHECKPOINT_FILE), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  return decodeCheckpoint(text);
}

/** Writes the checkpoint atomically (temporary file, then rename; a failed write leaves the old one and no temporary file). */
export function writeCheckpoint(dir: string, data: CheckpointData): void {
  const path = join(dir, CHECKPOINT_FILE);
  mkdirSync(dirname(path), { recursive: true, mode: 0o750 });
  replaceFileSync(path, encodeCheckpoint(data), 0o600);
}

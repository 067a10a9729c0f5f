/**
 * The DRA manager's checkpoint, `<root>/dra_manager_state`: the prepared
 * claims, which pods use them and what each driver returned, so a restarted
 * nodelet neither prepares a claim twice nor forgets to unprepare it. The
 * shape follows upstream's `pkg/kubelet/cm/dra/state` (`DRACheckpoint`,
 * `checkpoint.dra.kubelet.k8s.io/v1`, one `ClaimInfoState` per claim):
 *
 *     {"kind":"DRACheckpoint","apiVersion":"checkpoint.dra.kubelet.k8s.io/v1",
 *      "ClaimInfoStateList":[{"ClaimUID":"…","ClaimName":"…","Namespace":"…",
 *        "PodUIDs":{"<pod uid>":{}},
 *        "DriverState":{"<driver>":{"Devices":[{"PoolName":"…","DeviceName":"…",
 *          "RequestNames":["req"],"CDIDeviceIDs":["vendor/class=dev"]}]}}}],
 *      "Checksum":123}
 *
 * `Checksum` is the CRC-32 (IEEE) of the file's JSON with `Checksum` 0 — the
 * shape is upstream's, the checksum is nodelet's own (upstream's Go-printer
 * hash is not reproduced), so the file is not meant to be read by the
 * upstream kubelet. A file that does not verify is refused.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { crc32 } from 'node:zlib';
import { nodeletError } from '../errors/index.ts';
import { replaceFileSync } from '../paths/index.ts';

/** The checkpoint's file name under the root dir (upstream's). */
export const DRA_CHECKPOINT_FILE = 'dra_manager_state';

/** One prepared device (upstream `state.Device`). */
export interface CheckpointDevice {
  PoolName: string;
  DeviceName: string;
  RequestNames: string[];
  CDIDeviceIDs: string[];
}

/** One claim (upstream `state.ClaimInfoState`). */
export interface ClaimInfoState {
  ClaimUID: string;
  ClaimName: string;
  Namespace: string;
  /** The pods using the claim (a Go set: keys, empty values). */
  PodUIDs: Record<string, Record<string, never>>;
  DriverState: Record<string, { Devices: CheckpointDevice[] }>;
}

interface CheckpointFile {
  kind: 'DRACheckpoint';
  apiVersion: 'checkpoint.dra.kubelet.k8s.io/v1';
  ClaimInfoStateList: ClaimInfoState[];
  Checksum: number;
}

function body(list: readonly ClaimInfoState[], checksum: number): CheckpointFile {
  return { kind: 'DRACheckpoint', apiVersion: 'checkpoint.dra.kubelet.k8s.io/v1', ClaimInfoStateList: [...list], Checksum: checksum };
}

/** The file's text for `list` (checksummed). */
export function encodeCheckpoint(list: readonly ClaimInfoState[]): string {
  const sum = crc32(JSON.stringify(body(list, 0)));
  return JSON.stringify(body(list, sum));
}

/** The claims in `text`; throws `NDL_DRA_CHECKPOINT` when it is not a valid checkpoint. */
export function decodeCheckpoint(text: string): ClaimInfoState[] {
  let f: CheckpointFile;
  try {
    f = JSON.parse(text) as CheckpointFile;
  } catch (e) {
    throw nodeletError('NDL_DRA_CHECKPOINT', `not JSON: ${(e as Error).message}`);
  }
  if (f?.kind !== 'DRACheckpoint' || !Array.isArray(f.ClaimInfoStateList)) throw nodeletError('NDL_DRA_CHECKPOINT', 'not a DRACheckpoint');
  const want = crc32(JSON.stringify(body(f.ClaimInfoStateList, 0)));
  if (f.Checksum !== want) throw nodeletError('NDL_DRA_CHECKPOINT', `checksum mismatch (file ${f.Checksum}, computed ${want})`);
  return f.ClaimInfoStateList;
}

/** Reads the checkpoint at `path`: none when the file does not exist. */
export function readCheckpoint(path: string): ClaimInfoState[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw nodeletError('NDL_DRA_CHECKPOINT', `cannot read ${path}: ${(e as Error).message}`);
  }
  return decodeCheckpoint(text);
}

/** Writes the checkpoint atomically (temp file + rename; a failed write leaves the old one and no temporary file). */
export function writeCheckpoint(path: string, list: readonly ClaimInfoState[]): void {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o750 });
    replaceFileSync(path, encodeCheckpoint(list), 0o600);
  } catch (e) {
    throw nodeletError('NDL_DRA_CHECKPOINT', `cannot write ${path}: ${(e as Error).message}`);
  }
}

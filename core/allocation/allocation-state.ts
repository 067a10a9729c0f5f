/**
 * The resources allocated to (or actuated in) each pod's containers, checkpointed so that a
 * resize survives a nodelet restart: upstream's `pkg/kubelet/allocation/state`, in its file
 * format, under the root dir — `allocated_pods_state` (what admission and resizes granted) and
 * `actuated_pods_state` (what the containers' runs have):
 *
 *     {"data":"{\"entries\":{\"<pod uid>\":{\"ContainerResources\":{\"c1\":{\"limits\":{\"memory\":\"50Mi\"},
 *       \"requests\":{\"memory\":\"40Mi\"}}},\"PodLevelResources\":null}}}","checksum":2730771131}
 *
 * `checksum` is upstream's `checksum.New(data)`: FNV-32a of `(string)` followed by `data` (Go's
 * dump of a string), so the file verifies in the upstream kubelet and back. Written whole
 * (temporary file, then rename) after an entry changed — the changes of one event-loop turn in
 * one write, off the main thread, one write at a time (a burst of 100 admissions wrote the file
 * 100 times, 2–3 ms each, when it was written in place); a removed pod is dropped from memory
 * only and leaves the file at the next write, as upstream does. A file that cannot be read or
 * does not verify is reported (`NDL_ALLOCATION_CHECKPOINT`) and nodelet starts from an empty
 * state (upstream refuses to start): running pods are then allocated what their specs ask.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { V1ResourceRequirements } from '@kubernetes/client-node';
import type { Logger } from '@nodelet/plugin-api/v1';
import { nodeletError } from '../errors/index.ts';
import { replaceFile } from '../paths/index.ts';
import { goRequirements, sortedMap } from './resources.ts';

/** Upstream's file names under the root dir. */
export const ALLOCATED_STATE_FILE = 'allocated_pods_state';
export const ACTUATED_STATE_FILE = 'actuated_pods_state';

/** One pod's entry (upstream `state.PodResourceInfo`). */
export interface PodResourceInfo {
  /** By container name: the container's `resources` (requests, limits, claims). */
  ContainerResources: Record<string, V1ResourceRequirements>;
  /** Pod-level resources (not resized by nodelet: always null). */
  PodLevelResources: V1ResourceRequirements | null;
}

/** FNV-32a of a string's UTF-8 bytes. */
function fnv32a(text: string): number {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** Upstream's checksum of the `data` string. */
export function stateChecksum(data: string): number {
  return fnv32a(`(string)${data}`);
}

/** One entry's JSON as Go writes it (containers sorted, `v1.ResourceRequirements` in Go's field order). */
function entryJson(info: PodResourceInfo): string {
  const containers: Record<string, V1ResourceRequirements> = {};
  for (const [name, r] of Object.entries(sortedMap(info.ContainerResources))) containers[name] = goRequirements(r);
  return JSON.stringify({ ContainerResources: containers, PodLevelResources: info.PodLevelResources });
}

/** The file's text from each pod's entry JSON (pods sorted by uid, as Go writes a map). */
function encodeJson(entries: ReadonlyMap<string, string>): string {
  const uids = [...entries.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const data = uids.length ? `{"entries":{${uids.map((u) => `${JSON.stringify(u)}:${entries.get(u)!}`).join(',')}}}` : '{}';
  return JSON.stringify({ data, checksum: stateChecksum(data) });
}

/** The file's text for `entries`. */
export function encodeState(entries: ReadonlyMap<string, PodResourceInfo>): string {
  return encodeJson(new Map([...entries].map(([uid, info]) => [uid, entryJson(info)])));
}

/** The entries of a file's text; throws `NDL_ALLOCATION_CHECKPOINT` when it is not a valid checkpoint. */
export function decodeState(text: string): Map<string, PodResourceInfo> {
  const bad = (why: string) => nodeletError('NDL_ALLOCATION_CHECKPOINT', why);
  let file: { data?: unknown; checksum?: unknown };
  try {
    file = JSON.parse(text) as typeof file;
  } catch (e) {
    throw bad(`not JSON: ${(e as Error).message}`);
  }
  if (typeof file?.data !== 'string') throw bad('no data string');
  const actual = stateChecksum(file.data);
  if (file.checksum !== actual) throw bad(`checkpoint is corrupted: expected checksum ${String(file.checksum)}, actual ${actual}`);
  let data: { entries?: Record<string, Partial<PodResourceInfo>> | null };
  try {
    data = JSON.parse(file.data) as typeof data;
  } catch (e) {
    throw bad(`data is not JSON: ${(e as Error).message}`);
  }
  const out = new Map<string, PodResourceInfo>();
  for (const [uid, info] of Object.entries(data?.entries ?? {})) {
    const containers = info?.ContainerResources ?? {};
    if (typeof containers !== 'object' || Array.isArray(containers)) throw bad(`entry ${uid}: ContainerResources is not a map`);
    out.set(uid, { ContainerResources: containers, PodLevelResources: info?.PodLevelResources ?? null });
  }
  return out;
}

/** One checkpointed state (allocated or actuated), kept in memory and written after a change. */
export class AllocationState {
  /** Each pod's entry JSON, kept beside it (a write joins them). */
  private readonly json = new Map<string, string>();
  private dirty = false;
  private writing?: Promise<void>;

  private constructor(
    private readonly entries: Map<string, PodResourceInfo>,
    private readonly path: string | undefined,
    private readonly log: Logger,
    private written: string | undefined,
  ) {
    for (const [uid, info] of entries) this.json.set(uid, entryJson(info));
  }

  /** The state of `<dir>/<name>` (empty when there is none, or it is unusable: reported); `dir` undefined keeps it in memory only. */
  static open(dir: string | undefined, name: string, log: Logger): AllocationState {
    if (dir === undefined) return new AllocationState(new Map(), undefined, log, undefined);
    const path = join(dir, name);
    let text: string | undefined;
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
        log.error({ code: 'NDL_ALLOCATION_CHECKPOINT', path, err: String(e) }, 'cannot read the pod resource checkpoint; starting from an empty one');
    }
    let entries = new Map<string, PodResourceInfo>();
    if (text !== undefined) {
      try {
        entries = decodeState(text);
      } catch (e) {
        log.error(
          { code: 'NDL_ALLOCATION_CHECKPOINT', path, err: (e as Error).message },
          'the pod resource checkpoint is unusable; starting from an empty one',
        );
      }
    }
    mkdirSync(dirname(path), { recursive: true, mode: 0o750 });
    return new AllocationState(entries, path, log, text);
  }

  /** Pod `uid`'s entry. */
  get(uid: string): PodResourceInfo | undefined {
    return this.entries.get(uid);
  }

  /** Container `name` of pod `uid`. */
  container(uid: string, name: string): V1ResourceRequirements | undefined {
    return this.entries.get(uid)?.ContainerResources[name];
  }

  /** Replaces pod `uid`'s entry (written when it changed). */
  set(uid: string, info: PodResourceInfo): void {
    const json = entryJson(info);
    this.entries.set(uid, info);
    if (this.json.get(uid) === json) return;
    this.json.set(uid, json);
    this.store();
  }

  /** Sets container `name` of pod `uid` (written when it changed). */
  setContainer(uid: string, name: string, resources: V1ResourceRequirements): void {
    const info = this.entries.get(uid) ?? { ContainerResources: {}, PodLevelResources: null };
    this.set(uid, { ...info, ContainerResources: { ...info.ContainerResources, [name]: resources } });
  }

  /** Drops pod `uid` (from memory: the file follows at the next write, as upstream). */
  remove(uid: string): void {
    this.entries.delete(uid);
    this.json.delete(uid);
  }

  /** Drops every pod not in `keep` (from memory, as {@link AllocationState.remove}). */
  removeOrphans(keep: ReadonlySet<string>): void {
    for (const uid of [...this.entries.keys()]) if (!keep.has(uid)) this.remove(uid);
  }

  /** The pods with an entry. */
  uids(): string[] {
    return [...this.entries.keys()];
  }

  /** Resolves once every change made so far is written (or its write failed: reported). */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  /** Writes the state after this turn of the event loop; one write at a time, the last state wins. */
  private store(): void {
    if (this.path === undefined) return;
    this.dirty = true;
    this.writing ??= new Promise<void>((r) => setImmediate(r)).then(() => this.write());
  }

  private async write(): Promise<void> {
    while (this.dirty) {
      this.dirty = false;
      const text = encodeJson(this.json);
      if (text === this.written) continue;
      try {
        await replaceFile(this.path!, text, 0o600);
        this.written = text;
      } catch (e) {
        // Kept in memory; the next change tries again (upstream logs and goes on too).
        this.log.error({ code: 'NDL_ALLOCATION_CHECKPOINT', path: this.path, err: String(e) }, 'cannot write the pod resource checkpoint');
      }
    }
    this.writing = undefined;
  }
}

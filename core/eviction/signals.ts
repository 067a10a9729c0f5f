/**
 * Observes the eviction signals on the host (upstream `makeSignalObservations`,
 * which reads them from the summary API):
 *
 * - `memory.available` = capacity − working set, where capacity is `MemTotal` and
 *   the working set is what the root memory cgroup would report: used memory
 *   (`MemTotal − MemFree`) less the inactive file cache (`Inactive(file)`) — so
 *   `MemFree + Inactive(file)` (upstream: root cgroup usage − total_inactive_file);
 * - `nodefs.available` / `nodefs.inodesFree`: `statfs` of `--root-dir`;
 * - `imagefs.available` / `imagefs.inodesFree`: `statfs` of the image store (under
 *   `--root-dir`: the same filesystem unless mounted apart);
 * - `pid.available` = `kernel.pid_max` − the number of processes and threads
 *   (`/proc/loadavg`'s total).
 */
import { readFile, statfs } from 'node:fs/promises';
import type { Observations } from './thresholds.ts';

/** Where the signals are read from; injectable for tests. */
export interface SignalSources {
  /** `--root-dir` (nodefs). */
  readonly nodefsPath: string;
  /** The image store directory (imagefs). */
  readonly imagefsPath: string;
  /** Reads a text file (default `fs.readFile`); `/proc/meminfo`, `/proc/loadavg`, `/proc/sys/kernel/pid_max`. */
  readonly readText?: (path: string) => Promise<string>;
  /** `statfs(2)` (default `fs.statfs`). */
  readonly statfs?: (path: string) => Promise<{ blocks: number; bavail: number; bsize: number; files: number; ffree: number }>;
}

/** The fields of `/proc/meminfo` in bytes (values there are in kB). */
export function parseMeminfo(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^([^:]+):\s+(\d+)(?:\s+kB)?/.exec(line);
    if (m) out[m[1]!] = Number(m[2]) * (line.includes('kB') ? 1024 : 1);
  }
  return out;
}

/** memory.available from `/proc/meminfo`: capacity − (used − inactive file). */
export function memoryObservation(meminfo: Record<string, number>): { available: number; capacity: number } | undefined {
  const total = meminfo['MemTotal'];
  const free = meminfo['MemFree'];
  if (total === undefined || free === undefined) return undefined;
  const workingSet = Math.max(0, total - free - (meminfo['Inactive(file)'] ?? 0));
  return { available: total - workingSet, capacity: total };
}

/** The running processes and threads, from `/proc/loadavg` (`0.10 0.20 0.30 2/243 5586` → 243). */
export function processCount(loadavg: string): number | undefined {
  const m = /^\S+ \S+ \S+ \d+\/(\d+)/.exec(loadavg);
  return m ? Number(m[1]) : undefined;
}

/** Observes every signal it can; a source that fails leaves its signals out. */
export async function observeSignals(src: SignalSources): Promise<Observations> {
  const read = src.readText ?? ((p: string) => readFile(p, 'utf8'));
  const sfs = src.statfs ?? ((p: string) => statfs(p));
  const obs: Observations = {};
  const mem = await read('/proc/meminfo').then(parseMeminfo, () => undefined);
  const m = mem && memoryObservation(mem);
  if (m) obs['memory.available'] = m;
  const fsObs = async (path: string, bytes: 'nodefs.available' | 'imagefs.available', inodes: 'nodefs.inodesFree' | 'imagefs.inodesFree') => {
    const s = await sfs(path).catch(() => undefined);
    if (!s) return;
    obs[bytes] = { available: s.bavail * s.bsize, capacity: s.blocks * s.bsize };
    if (s.files > 0) obs[inodes] = { available: s.ffree, capacity: s.files };
  };
  await fsObs(src.nodefsPath, 'nodefs.available', 'nodefs.inodesFree');
  await fsObs(src.imagefsPath, 'imagefs.available', 'imagefs.inodesFree');
  const pidMax = Number((await read('/proc/sys/kernel/pid_max').catch(() => '')).trim());
  const procs = processCount(await read('/proc/loadavg').catch(() => ''));
  if (pidMax > 0 && procs !== undefined) obs['pid.available'] = { available: pidMax - procs, capacity: pidMax };
  return obs;
}

/**
 * Facts about the real host that the Node object reports: CPU, memory,
 * ephemeral storage, OS image, kernel, and the node's IP.
 */
import { cpus, networkInterfaces, release, totalmem, freemem } from 'node:os';
import { readFileSync, statfsSync } from 'node:fs';

/** Capacity and identity of the host. */
export interface HostInfo {
  cpu: number;
  memoryBytes: number;
  ephemeralStorageBytes: number;
  osImage: string;
  kernelVersion: string;
  machineID: string;
  bootID: string;
}

function readTrimmed(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}

/** The PRETTY_NAME of /etc/os-release, like upstream's osImage. */
export function osImage(): string {
  const m = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readTrimmed('/etc/os-release'));
  return m?.[1] ?? 'unknown';
}

/** Reads the host's capacity; `rootDir` decides which filesystem is ephemeral storage. */
export function readHostInfo(rootDir: string): HostInfo {
  const fs = statfsSync(rootDir);
  return {
    cpu: cpus().length,
    memoryBytes: totalmem(),
    ephemeralStorageBytes: fs.blocks * fs.bsize,
    osImage: osImage(),
    kernelVersion: release(),
    machineID: readTrimmed('/etc/machine-id'),
    bootID: readTrimmed('/proc/sys/kernel/random/boot_id'),
  };
}

/** Current pressure signals, compared against upstream's default hard eviction thresholds. */
export interface Pressure {
  memoryAvailableBytes: number;
  diskAvailableFraction: number;
  pidsAvailableFraction: number;
}

/** Samples memory.available, nodefs.available and pid availability. */
export function samplePressure(rootDir: string): Pressure {
  const fs = statfsSync(rootDir);
  const pidMax = Number(readTrimmed('/proc/sys/kernel/pid_max')) || 32768;
  const running = Number(/processes\s+(\d+)/.exec(readTrimmed('/proc/loadavg').replace(/^\S+ \S+ \S+ \d+\/(\d+).*$/, 'processes $1'))?.[1] ?? 0);
  return {
    memoryAvailableBytes: Number(/MemAvailable:\s+(\d+) kB/.exec(readTrimmed('/proc/meminfo'))?.[1] ?? 0) * 1024 || freemem(),
    diskAvailableFraction: fs.bavail / fs.blocks,
    pidsAvailableFraction: 1 - running / pidMax,
  };
}

/** The first non-internal IPv4 address, or 127.0.0.1 (upstream picks the default route's address). */
export function detectNodeIP(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}

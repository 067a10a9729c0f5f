import { describe, expect, it } from 'vitest';
import { memoryObservation, observeSignals, parseMeminfo, processCount } from '../../../core/eviction/signals.ts';

const MEMINFO = 'MemTotal:        1000 kB\nMemFree:          200 kB\nMemAvailable:     600 kB\nInactive(file):   150 kB\nHugePages_Total:     0\n';

describe('signal observation', () => {
  it('computes memory.available as capacity minus the working set (used less inactive file)', () => {
    const m = parseMeminfo(MEMINFO);
    expect(m['MemTotal']).toBe(1000 * 1024);
    expect(m['HugePages_Total']).toBe(0);
    expect(memoryObservation(m)).toEqual({ available: 350 * 1024, capacity: 1000 * 1024 });
    expect(memoryObservation({})).toBeUndefined();
  });

  it('reads processes from /proc/loadavg', () => {
    expect(processCount('0.10 0.20 0.30 2/243 5586\n')).toBe(243);
    expect(processCount('garbage')).toBeUndefined();
  });

  it('observes every signal from its sources, and leaves out what it cannot read', async () => {
    const files: Record<string, string> = { '/proc/meminfo': MEMINFO, '/proc/loadavg': '0 0 0 1/100 1', '/proc/sys/kernel/pid_max': '1000\n' };
    const obs = await observeSignals({
      nodefsPath: '/nodefs',
      imagefsPath: '/imagefs',
      readText: async (p) => files[p] ?? Promise.reject(new Error('ENOENT')),
      statfs: async (p) => (p === '/nodefs' ? { blocks: 100, bavail: 10, bsize: 4096, files: 50, ffree: 5 } : Promise.reject(new Error('ENOENT'))),
    });
    expect(obs).toEqual({
      'memory.available': { available: 350 * 1024, capacity: 1000 * 1024 },
      'nodefs.available': { available: 10 * 4096, capacity: 100 * 4096 },
      'nodefs.inodesFree': { available: 5, capacity: 50 },
      'pid.available': { available: 900, capacity: 1000 },
    });
  });
});

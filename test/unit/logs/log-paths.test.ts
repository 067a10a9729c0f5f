import { describe, expect, it } from 'vitest';
import { mkdtemp, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isNodeletError } from '../../../core/errors/catalogue.ts';
import { containerLogDir, containerLogPath, listRotatedLogs, podLogDir, rotatedLogFile, rotationStamp } from '../../../core/logs/log-paths.ts';

const pod = { namespace: 'default', name: 'web-1', uid: '3f1c0a9e-1b2c-4d5e-8f90-123456789abc' };

describe('log paths', () => {
  it('lays out logs like /var/log/pods', () => {
    expect(containerLogPath('/var/lib/nodelet', pod, 'app', 2)).toBe('/var/lib/nodelet/logs/pods/default_web-1_3f1c0a9e-1b2c-4d5e-8f90-123456789abc/app/2.log');
    expect(rotatedLogFile('/d/app', 0, new Date('2024-03-05T07:08:09Z'))).toBe('/d/app/0.log.20240305-070809');
    expect(rotationStamp(new Date('2024-12-31T23:59:58.999Z'))).toBe('20241231-235958');
  });

  it.each([
    { namespace: '..', name: 'p', uid: 'u' },
    { namespace: 'default', name: '..', uid: 'u' },
    { namespace: 'default', name: 'a/../../etc', uid: 'u' },
    { namespace: 'default', name: 'p', uid: '../x' },
    { namespace: 'default', name: 'p', uid: '' },
    { namespace: 'a_b', name: 'p', uid: 'u' },
  ])('rejects names that could escape the root: %o', (bad) => {
    let err: unknown;
    try {
      podLogDir('/r', bad);
    } catch (e) {
      err = e;
    }
    expect(isNodeletError(err, 'NDL_PATH_ESCAPE')).toBe(true);
  });

  it('rejects bad container names and restart counts', () => {
    expect(() => containerLogDir('/r', pod, '..')).toThrow(/invalid container name/);
    expect(() => containerLogDir('/r', pod, 'a/b')).toThrow(/invalid container name/);
    expect(() => containerLogPath('/r', pod, 'app', -1)).toThrow(/invalid restart count/);
    expect(() => containerLogPath('/r', pod, 'app', 1.5)).toThrow(/invalid restart count/);
  });

  it('lists rotated files of one restart, oldest first', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'logpaths-'));
    await mkdir(dir, { recursive: true });
    for (const n of ['0.log', '0.log.20240102-000000', '0.log.20240101-000000', '1.log.20240101-000000', '0.log.tmp', '10.log.20240101-000000']) {
      await writeFile(path.join(dir, n), '');
    }
    expect(await listRotatedLogs(dir, 0)).toEqual([path.join(dir, '0.log.20240101-000000'), path.join(dir, '0.log.20240102-000000')]);
    expect(await listRotatedLogs(path.join(dir, 'missing'), 0)).toEqual([]);
  });
});

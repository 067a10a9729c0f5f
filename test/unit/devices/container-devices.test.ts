import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyDeviceConfig, deviceStagingDir } from '../../../core/devices/container-devices.ts';
import type { ContainerDeviceConfig } from '../../../core/devices/pod-devices.ts';
import { tmp } from './helpers.ts';

const empty = (): ContainerDeviceConfig => ({ envs: {}, mounts: [], devices: [], annotations: {}, cdiDevices: [], conflicts: [] });

describe('applyDeviceConfig', () => {
  it('mounts directories as they are and stages files into a directory at their parent path', () => {
    const host = tmp();
    writeFileSync(join(host, 'Dev-1'), 'one');
    writeFileSync(join(host, 'Dev-2'), 'two');
    mkdirSync(join(host, 'lib'));
    const staging = join(tmp(), 'stage');
    const cfg = {
      ...empty(),
      envs: { A: '1' },
      mounts: [
        { containerPath: '/tmp/Dev-1', hostPath: join(host, 'Dev-1'), readOnly: false },
        { containerPath: '/tmp/Dev-2', hostPath: join(host, 'Dev-2'), readOnly: true },
        { containerPath: '/opt/lib', hostPath: join(host, 'lib'), readOnly: true },
      ],
    };
    const out = applyDeviceConfig(cfg, staging);
    expect(out.env).toEqual({ A: '1' });
    expect(out.warnings).toEqual([]);
    expect(out.mounts).toEqual([
      { name: 'device-mount-2', hostPath: join(host, 'lib'), containerPath: '/opt/lib', readOnly: true },
      { name: 'device-mount-dir-0', hostPath: join(staging, '0'), containerPath: '/tmp', readOnly: false },
    ]);
    expect(readFileSync(join(staging, '0', 'Dev-2'), 'utf8')).toBe('two');
    expect(statSync(join(staging, '0', 'Dev-1')).ino).toBe(statSync(join(host, 'Dev-1')).ino); // the same file, not a copy
  });

  it('reports what a provider cannot apply', () => {
    const staging = join(tmp(), 'stage');
    const out = applyDeviceConfig(
      {
        ...empty(),
        mounts: [
          { containerPath: '/data', hostPath: '/nonexistent/x', readOnly: false },
          { containerPath: '/vol', hostPath: tmp(), readOnly: false },
        ],
        devices: [{ containerPath: '/dev/x', hostPath: '/dev/null', permissions: 'rw' }],
        cdiDevices: ['vendor.com/dev=1'],
        annotations: { k: 'v' },
        conflicts: ['env A: r2 sets "2", already "1"'],
      },
      staging,
      ['/vol'],
    );
    expect(out.mounts).toEqual([]);
    expect(out.warnings).toEqual([
      'conflicting device settings, the first one wins: env A: r2 sets "2", already "1"',
      'device mount /nonexistent/x at /data: host path unavailable (ENOENT)',
      expect.stringMatching(/^device mount .* at \/vol: path already used by a volume mount$/),
      'device /dev/null at /dev/x (rw) cannot be applied by this provider',
      'CDI device vendor.com/dev=1 cannot be applied by this provider',
      'container annotation k cannot be applied by this provider',
    ]);
  });

  it('keeps staging inside the pod directory', () => {
    expect(deviceStagingDir('/p', 'app')).toBe('/p/device-plugin-mounts/app');
    expect(() => deviceStagingDir('/p', '../x')).toThrow(/invalid container name/);
  });
});

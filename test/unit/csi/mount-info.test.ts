// Mount table parsing (octal escapes, prefixes that are not parents).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isMountPoint, mountPoints, mountsUnder } from '../../../core/volumes/csi/mount-info.ts';

let dir: string;
let file: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ndl-mi-'));
  file = join(dir, 'mountinfo');
  await writeFile(
    file,
    [
      '22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/sda1 rw',
      '40 22 0:35 / /var/lib/nodelet/pods/u/volumes/kubernetes.io~csi/my\\040vol/mount rw shared:2 - ext4 /dev/sda1 rw',
      '41 22 0:36 / /var/lib/nodelet-other rw shared:3 - tmpfs tmpfs rw',
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('mount info', () => {
  it('decodes escaped mount points', async () => {
    expect(await mountPoints(file)).toContain('/var/lib/nodelet/pods/u/volumes/kubernetes.io~csi/my vol/mount');
    expect(await isMountPoint('/var/lib/nodelet/pods/u/volumes/kubernetes.io~csi/my vol/mount/', file)).toBe(true);
    expect(await isMountPoint('/var/lib/nodelet/pods/u', file)).toBe(false);
  });

  it('lists mounts under a root, not siblings sharing its prefix', async () => {
    expect(await mountsUnder('/var/lib/nodelet', file)).toEqual(['/var/lib/nodelet/pods/u/volumes/kubernetes.io~csi/my vol/mount']);
  });

  it('reads the real table of this process', async () => {
    expect(await isMountPoint('/')).toBe(true);
  });
});
